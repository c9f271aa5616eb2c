//! The main example: an MCP server over Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
//!
//! Run: `cargo run --example http_server -- --port 8080 [--workers N] [--stateless] [--json-response]`
//!
//! Operations: `/healthz` and `/readyz` are served beside `/mcp`; SIGTERM (or Ctrl-C) drains:
//! new requests get 503, requests in flight get `--drain-ms` (default 30000) to finish, then the
//! process exits 0. Admission limits: `--max-concurrent N`, `--max-concurrent-per-principal N`,
//! `--tool-limit NAME=N` (repeatable), `--session-rate N` and `--principal-rate N` (requests per
//! second), `--queue N` and `--queue-ms MS` (the wait queue of the concurrency limits);
//! `--event-store-mib N` bounds the events kept for resumption (default 256). Sessions:
//! `--max-sessions N` live at most (default 10000; past it the least recently active one idle
//! for a minute is evicted, or `initialize` is answered 503), `--idle-timeout-s S` closes a
//! session idle that long (default 1800; 0 keeps idle sessions).
//!
//! Protected by bearer tokens (JWTs checked against the authorization server's JWKS):
//! `--auth-jwks URL --auth-issuer ISS --auth-audience AUD [--auth-scope S]... [--auth-server URL]
//! [--auth-resource URL]`. Every request then needs `Authorization: Bearer <token>` issued by
//! `ISS` for `AUD`, with every `--auth-scope`; the protected resource metadata is served at
//! `/.well-known/oauth-protected-resource/mcp`, naming `--auth-server` (default: the issuer) as
//! the authorization server and `--auth-resource` (default: `http://127.0.0.1:PORT/mcp`) as the
//! resource.
//!
//! Agent Skills (the Skills extension, needs `--features skills`): `--skills DIR` serves every
//! skill under `DIR` (`skills/list`, `skills/get`, `skill://` resources).
//!
//! One node of several sharing their sessions on Redis (needs `--features redis`):
//! `--redis redis://127.0.0.1:6379 [--state-key HEX]`; any node then serves any session behind
//! any load balancer (see the README's "Running several nodes"). On a Redis Cluster:
//! `--redis-cluster redis://10.0.0.1:7000,redis://10.0.0.2:7000,...` (some of its nodes); on
//! a master watched by Sentinels: `--redis-sentinel redis://10.0.0.1:26379[,URL...]
//! --redis-master NAME`.
//!
//! Traced and measured with OpenTelemetry (build with `--features otel`): `--otlp URL` exports
//! the spans and metrics of every MCP request over OTLP/HTTP to the collector at `URL`
//! (`http://localhost:4318`), along with the example's own `tracing` spans.
//!
//! Tools: `echo` (returns `message`, logging it at debug level), `sleep` (waits `ms`, reporting
//! progress every 100 ms when asked, stopping when cancelled), `summarize` (asks the client to
//! sample an LLM), `add_tool` (registers a tool at run time, at most 100 of them with names
//! of at most 64 bytes per node, made on every node of a cluster; every session gets
//! `tools/list_changed`), `whoami` (the caller's identity, with bearer auth)
//! and `cancelled_sleeps` (how many `sleep` calls a cancellation stopped). Prompt `greet`, resource `file:///example/readme.txt`, template
//! `greeting://{name}`; completion offers names for `greet`'s `message` and the template's `name`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use actix_mcp::InMemoryEventStore;
use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteRequestParams, CompleteResult, Completion, CreateMessageRequestParams, SamplingMessage,
    SamplingMessageContentBlock,
};
use actix_mcp::server::auth::BearerAuth;
#[cfg(feature = "auth")]
use actix_mcp::server::auth::{AuthConfigError, JwtValidator};
use actix_mcp::transport::http::{AdmissionConfig, Rate};
use actix_mcp::transport::shutdown_signal;
use clap::Parser;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Parser)]
struct Cli {
    /// Port to listen on (127.0.0.1).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Worker threads (default: actix-web's, one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// No sessions: every POST stands alone.
    #[arg(long)]
    stateless: bool,
    /// Answer with one JSON body instead of an SSE stream.
    #[arg(long)]
    json_response: bool,
    /// Protect the endpoint: the JWKS URL of the authorization server that signs the tokens.
    #[arg(long, value_name = "URL", requires_all = ["auth_issuer", "auth_audience"])]
    auth_jwks: Option<String>,
    /// The issuer (`iss`) tokens must come from.
    #[arg(long, value_name = "ISS", requires = "auth_jwks")]
    auth_issuer: Option<String>,
    /// The audience (`aud`) tokens must be issued for (usually the resource URL).
    #[arg(long, value_name = "AUD", requires = "auth_jwks")]
    auth_audience: Option<String>,
    /// A scope every request needs (repeat for more).
    #[arg(long = "auth-scope", value_name = "S", requires = "auth_jwks")]
    auth_scopes: Vec<String>,
    /// The authorization server the metadata names (default: the issuer).
    #[arg(long, value_name = "URL", requires = "auth_jwks")]
    auth_server: Option<String>,
    /// The resource identifier the metadata names (default: `http://127.0.0.1:PORT/mcp`).
    #[arg(long, value_name = "URL", requires = "auth_jwks")]
    auth_resource: Option<String>,
    /// On SIGTERM, how long requests in flight may take to finish before they are cancelled.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    drain_ms: u64,
    /// Most requests answered at once, over all clients.
    #[arg(long, value_name = "N")]
    max_concurrent: Option<usize>,
    /// With bearer auth, most requests one identity has answered at once.
    #[arg(long, value_name = "N")]
    max_concurrent_per_principal: Option<usize>,
    /// Most concurrent calls of one tool, as `NAME=N` (repeat for more tools).
    #[arg(long = "tool-limit", value_name = "NAME=N", value_parser = tool_limit)]
    tool_limits: Vec<(String, usize)>,
    /// Requests per second each session may send (burst: the same number).
    #[arg(long, value_name = "N")]
    session_rate: Option<u32>,
    /// With bearer auth, requests per second each identity may send.
    #[arg(long, value_name = "N")]
    principal_rate: Option<u32>,
    /// Most requests waiting for a concurrency slot at once.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    queue: usize,
    /// Longest wait for a concurrency slot, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    queue_ms: u64,
    /// Most live sessions (stateful mode).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_sessions: usize,
    /// Sessions without requests or open streams this long are closed (0: never).
    #[arg(long, value_name = "S", default_value_t = 1800)]
    idle_timeout_s: u64,
    /// Most memory the SSE events kept for resumption may take, over all sessions, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    event_store_mib: usize,
    /// Serve as one node of a cluster sharing its sessions, stream events and messages on the
    /// Redis server at URL (needs `--features redis`).
    #[arg(long, value_name = "URL", conflicts_with_all = ["redis_cluster", "redis_sentinel"])]
    redis: Option<String>,
    /// Serve as one node of a cluster on the Redis Cluster these nodes (some of its masters or
    /// replicas, comma-separated URLs) belong to (needs `--features redis`).
    #[arg(long, value_name = "URL,URL,...", value_delimiter = ',', num_args = 1.., conflicts_with = "redis_sentinel")]
    redis_cluster: Vec<String>,
    /// Serve as one node of a cluster on the Redis master that these Sentinels
    /// (comma-separated URLs) monitor as `--redis-master` (needs `--features redis`).
    #[arg(long, value_name = "URL[,URL]", value_delimiter = ',', num_args = 1.., requires = "redis_master")]
    redis_sentinel: Vec<String>,
    /// The name the Sentinels of `--redis-sentinel` know the master by.
    #[arg(long, value_name = "NAME", requires = "redis_sentinel")]
    redis_master: Option<String>,
    /// With a cluster: how long, in milliseconds, a node serves a session it holds without
    /// reading its record from Redis (0: every request reads it). See `Cluster::session_lease`.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    session_lease_ms: u64,
    /// With a cluster: keep requests' SSE streams in this node's memory, not in Redis (another
    /// node resuming one asks this one on the bus). See `RedisEventStore::request_streams_on_node`.
    #[arg(long)]
    request_streams_on_node: bool,
    /// Seal `requestState` with this key (64 hex digits), the same on every node of a cluster
    /// (default: a random key per process).
    #[arg(long, value_name = "HEX")]
    state_key: Option<String>,
    /// Export traces and metrics over OTLP/HTTP to this collector (needs `--features otel`).
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Serve every skill under DIR (the Skills extension; needs `--features skills`).
    #[arg(long, value_name = "DIR")]
    skills: Option<std::path::PathBuf>,
}

/// Parses `NAME=N` for `--tool-limit`.
fn tool_limit(arg: &str) -> Result<(String, usize), String> {
    let (name, limit) = arg
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=N, got {arg:?}"))?;
    let limit = limit
        .parse()
        .map_err(|err| format!("bad limit in {arg:?}: {err}"))?;
    Ok((name.to_owned(), limit))
}

/// The admission limits the flags ask for.
fn admission(cli: &Cli) -> AdmissionConfig {
    let mut admission =
        AdmissionConfig::new().queue(cli.queue, Duration::from_millis(cli.queue_ms));
    if let Some(limit) = cli.max_concurrent {
        admission = admission.max_concurrent(limit);
    }
    if let Some(limit) = cli.max_concurrent_per_principal {
        admission = admission.max_concurrent_per_principal(limit);
    }
    for (name, limit) in &cli.tool_limits {
        admission = admission.max_concurrent_per_tool(name.clone(), *limit);
    }
    if let Some(rate) = cli.session_rate {
        admission = admission.session_rate(Rate::per_second(rate));
    }
    if let Some(rate) = cli.principal_rate {
        admission = admission.principal_rate(Rate::per_second(rate));
    }
    admission
}

/// The cluster of `--redis`, `--redis-cluster` or `--redis-sentinel`, if one is asked for.
#[cfg(feature = "redis")]
async fn cluster(cli: &Cli) -> std::io::Result<Option<actix_mcp::cluster::Cluster>> {
    use actix_mcp::cluster::Cluster;
    use actix_mcp::cluster::redis::{Redis, RedisEventStore};

    fn urls(urls: &[String]) -> Vec<&str> {
        urls.iter().map(String::as_str).collect()
    }
    let redis = if let Some(url) = &cli.redis {
        Redis::connect(url, "mcp").await
    } else if !cli.redis_cluster.is_empty() {
        Redis::connect_cluster(&urls(&cli.redis_cluster), "mcp").await
    } else if let Some(master) = &cli.redis_master {
        Redis::connect_sentinel(&urls(&cli.redis_sentinel), master, "mcp").await
    } else {
        return Ok(None);
    };
    let redis = redis.map_err(std::io::Error::other)?;
    let mut cluster =
        Cluster::on_redis(redis.clone()).session_lease(Duration::from_millis(cli.session_lease_ms));
    if cli.request_streams_on_node {
        cluster = cluster.event_store(Arc::new(
            RedisEventStore::new(redis).request_streams_on_node(),
        ));
    }
    Ok(Some(cluster))
}

#[cfg(not(feature = "redis"))]
async fn cluster(cli: &Cli) -> std::io::Result<Option<actix_mcp::cluster::Cluster>> {
    if cli.redis.is_none() && cli.redis_cluster.is_empty() && cli.redis_sentinel.is_empty() {
        return Ok(None);
    }
    Err(std::io::Error::other(
        "--redis, --redis-cluster and --redis-sentinel need the `redis` feature: cargo run \
         --features redis --example http_server",
    ))
}

/// What keeps the OTLP export running; flushed when dropped.
#[cfg(feature = "otel")]
type Telemetry = Option<actix_mcp::telemetry::TelemetryGuard>;
/// Nothing to keep: this build has no OpenTelemetry.
#[cfg(not(feature = "otel"))]
struct Telemetry;

/// Starts the OTLP export `--otlp` asks for, and the log output (joined to the traces when
/// exporting).
#[cfg(feature = "otel")]
fn telemetry(cli: &Cli) -> std::io::Result<Telemetry> {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let guard = match &cli.otlp {
        Some(url) => Some(actix_mcp::telemetry::init_otlp(url).map_err(std::io::Error::other)?),
        None => None,
    };
    tracing_subscriber::registry()
        .with(filter())
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(guard.as_ref().map(|guard| guard.tracing_layer()))
        .init();
    Ok(guard)
}

/// The log output; `--otlp` is refused: this build has no OpenTelemetry.
#[cfg(not(feature = "otel"))]
fn telemetry(cli: &Cli) -> std::io::Result<Telemetry> {
    if cli.otlp.is_some() {
        eprintln!(
            "error: --otlp needs OpenTelemetry support: build with `--features otel` \
             (cargo run --example http_server --features otel -- --otlp URL)"
        );
        std::process::exit(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .init();
    Ok(Telemetry)
}

/// `RUST_LOG`, else `info`.
fn filter() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into())
}

/// The bearer protection the `--auth-*` flags ask for, if any.
#[cfg(feature = "auth")]
fn bearer_auth(cli: &Cli) -> Result<Option<BearerAuth>, AuthConfigError> {
    let (Some(jwks), Some(issuer), Some(audience)) =
        (&cli.auth_jwks, &cli.auth_issuer, &cli.auth_audience)
    else {
        return Ok(None);
    };
    let validator = JwtValidator::builder(jwks)
        .issuer(issuer)
        .audience(audience)
        .build()?;
    let resource = cli
        .auth_resource
        .clone()
        .unwrap_or_else(|| format!("http://127.0.0.1:{}/mcp", cli.port));
    let auth = BearerAuth::builder(resource, validator)
        .authorization_server(cli.auth_server.as_deref().unwrap_or(issuer))
        .metadata("resource_name", "actix-mcp example server")
        .build()?;
    Ok(Some(auth))
}

/// Without the `auth` feature there is no JWT validator to protect the endpoint with.
#[cfg(not(feature = "auth"))]
fn bearer_auth(cli: &Cli) -> Result<Option<BearerAuth>, String> {
    match cli.auth_jwks {
        Some(_) => Err("--auth-jwks needs the `auth` feature (cargo run --features auth --example http_server)".into()),
        None => Ok(None),
    }
}

/// What completion offers for a name (`greet`'s `message`, `greeting://{name}`).
const NAMES: [&str; 5] = ["Ada", "Alan", "Alonzo", "Barbara", "Grace"];

/// Arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// Arguments of `sleep`.
#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to wait, in milliseconds.
    ms: u64,
}

/// Arguments of `summarize`.
#[derive(Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    text: String,
}

/// The most tools `add_tool` registers: every client may call it, so the catalog it grows (sent
/// whole in every `tools/list`) must stay bounded.
const MAX_ADDED_TOOLS: usize = 100;

/// The longest name `add_tool` accepts, in bytes.
const MAX_ADDED_NAME: usize = 64;

/// The factory `add_tool` defines its tools with, on every node of a cluster (`--redis`):
/// a tool named `args.name` that answers `hello from NAME`.
fn greeter(args: &serde_json::Value) -> Result<ToolDef, String> {
    let name = args["name"]
        .as_str()
        .ok_or("`name` must be a string")?
        .to_owned();
    if name.len() > MAX_ADDED_NAME {
        return Err(format!(
            "tool names added at run time are limited to {MAX_ADDED_NAME} bytes"
        ));
    }
    let greeting = format!("hello from {name}");
    Ok(ToolDef::new(name, move |_cx: RequestContext| {
        let greeting = greeting.clone();
        async move { greeting }
    })
    .description("A tool added at run time"))
}

/// Registers a tool named `name` at run time on every node (see [`greeter`]), unless this
/// node has added [`MAX_ADDED_TOOLS`] already (`added` counts them).
async fn add_tool(
    added: &AtomicUsize,
    name: String,
    cx: &RequestContext,
) -> Result<&'static str, McpError> {
    let reserved = added.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
        (n < MAX_ADDED_TOOLS).then_some(n + 1)
    });
    if reserved.is_err() {
        return Err(McpError::tool(format!(
            "this server holds at most {MAX_ADDED_TOOLS} tools added at run time"
        )));
    }
    cx.server()
        .define_shared_tool("greeter", serde_json::json!({ "name": name }))
        .await
        .map_err(|err| {
            added.fetch_sub(1, Ordering::AcqRel);
            McpError::tool(err.to_string())
        })?;
    Ok("added")
}

/// Arguments of `add_tool`.
#[derive(Deserialize, JsonSchema)]
struct AddToolArgs {
    /// The new tool's name.
    name: String,
}

/// Counts a `sleep` that a cancellation stopped, when dropped unfinished (a cancelled request's
/// handler is dropped, or returns early).
struct CountCancelled {
    cancelled: Arc<AtomicUsize>,
    cx: RequestContext,
    finished: bool,
}

impl Drop for CountCancelled {
    fn drop(&mut self) {
        if !self.finished && self.cx.is_cancelled() {
            self.cancelled.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Waits `ms`, reporting progress every 100 ms when the request carries a progress token;
/// returns early when the request is cancelled (counted in `cancelled`).
async fn sleep(
    args: SleepArgs,
    cx: RequestContext,
    cancelled: Arc<AtomicUsize>,
) -> Result<String, McpError> {
    let mut counted = CountCancelled {
        cancelled,
        cx: cx.clone(),
        finished: false,
    };
    let slept = sleep_until_cancelled(args, &cx).await;
    counted.finished = slept.is_ok();
    slept
}

async fn sleep_until_cancelled(args: SleepArgs, cx: &RequestContext) -> Result<String, McpError> {
    let total = Duration::from_millis(args.ms);
    let started = Instant::now();
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.tick().await;
    loop {
        let left = total.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Ok(format!("slept {} ms", args.ms));
        }
        tokio::select! {
            () = cx.cancelled() => return Err(McpError::tool("cancelled")),
            () = tokio::time::sleep(left) => {}
            _ = ticker.tick() => {
                let elapsed = started.elapsed().as_millis() as f64;
                cx.progress(Progress::new(elapsed).total(args.ms as f64).message("sleeping"));
            }
        }
    }
}

/// Asks the client to summarize `text` with its LLM.
async fn summarize(
    Params(args): Params<SummarizeArgs>,
    cx: RequestContext,
) -> Result<String, McpError> {
    let request = CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(format!(
            "Summarize: {}",
            args.text
        ))],
        200,
    );
    let result = cx.create_message(request).await?;
    let text = result
        .content
        .as_slice()
        .iter()
        .find_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        });
    text.ok_or_else(|| McpError::tool("the client answered without text"))
}

/// Completes a name: the entries of [`NAMES`] that start with what is typed so far.
async fn complete_name(
    params: CompleteRequestParams,
    _cx: RequestContext,
) -> Result<CompleteResult, McpError> {
    let typed = params.argument.value;
    let values: Vec<String> = NAMES
        .iter()
        .filter(|name| name.starts_with(&typed))
        .map(|name| (*name).to_owned())
        .collect();
    let total = Some(values.len() as u64);
    Ok(CompleteResult {
        completion: Completion {
            values,
            total,
            has_more: Some(false),
        },
        meta: None,
    })
}

/// Adds the skills of `--skills`.
#[cfg(feature = "skills")]
fn skills(
    builder: actix_mcp::ServerBuilder,
    dir: Option<&std::path::Path>,
) -> std::io::Result<actix_mcp::ServerBuilder> {
    Ok(match dir {
        Some(dir) => builder.skills_dir(dir),
        None => builder,
    })
}

/// `--skills` is refused: this build has no Skills extension.
#[cfg(not(feature = "skills"))]
fn skills(
    builder: actix_mcp::ServerBuilder,
    dir: Option<&std::path::Path>,
) -> std::io::Result<actix_mcp::ServerBuilder> {
    match dir {
        Some(_) => Err(std::io::Error::other(
            "--skills needs the `skills` feature: cargo run --features skills --example http_server",
        )),
        None => Ok(builder),
    }
}

fn server(
    required_scopes: &[String],
    state_key: Option<&str>,
    skills_dir: Option<&std::path::Path>,
) -> std::io::Result<Server> {
    let added = Arc::new(AtomicUsize::new(0));
    let cancelled_sleeps = Arc::new(AtomicUsize::new(0));
    let counted_sleeps = cancelled_sleeps.clone();
    let builder = skills(
        Server::builder("actix-mcp-example", env!("CARGO_PKG_VERSION")),
        skills_dir,
    )?;
    let builder = match state_key {
        Some(key) => builder.request_state_key_hex("cluster", key),
        None => builder,
    };
    builder
        .required_scopes(required_scopes.iter().cloned())
        .title("actix-mcp example server")
        .instructions(
            "Echo text, sleep, summarize with the client's LLM, or add tools at run time.",
        )
        .tool_factory("greeter", greeter)
        .tool(
            ToolDef::new(
                "echo",
                |Params(args): Params<EchoArgs>, cx: RequestContext| async move {
                    cx.log(
                        LogMessage::new(LoggingLevel::Debug, format!("echo: {}", args.message))
                            .logger("echo"),
                    );
                    args.message
                },
            )
            .description("Returns its message unchanged (and logs it at debug level)"),
        )
        .tool(
            ToolDef::new(
                "sleep",
                move |Params(args): Params<SleepArgs>, cx: RequestContext| {
                    sleep(args, cx, counted_sleeps.clone())
                },
            )
            .description("Waits `ms` milliseconds, reporting progress"),
        )
        .tool(
            ToolDef::new("summarize", summarize)
                .description("Summarizes text with the client's LLM (sampling)"),
        )
        .tool(
            ToolDef::new(
                "add_tool",
                move |Params(args): Params<AddToolArgs>, cx: RequestContext| {
                    let added = added.clone();
                    async move { add_tool(&added, args.name, &cx).await }
                },
            )
            .description("Registers a new echo-like tool at run time"),
        )
        .tool(
            ToolDef::new("whoami", |cx: RequestContext| async move {
                match cx.identity() {
                    Some(identity) => format!(
                        "{} (scopes: {})",
                        identity.subject().unwrap_or("no subject"),
                        identity.scopes().join(" ")
                    ),
                    None => "anonymous: this endpoint has no bearer auth".to_owned(),
                }
            })
            .description("Says who is calling (the bearer token's subject and scopes)"),
        )
        .tool(
            ToolDef::new("cancelled_sleeps", move || {
                let count = cancelled_sleeps.load(Ordering::Acquire);
                async move { count.to_string() }
            })
            .description("How many `sleep` calls a cancellation stopped"),
        )
        .prompt(
            PromptDef::new("greet", |Params(args): Params<EchoArgs>| async move {
                PromptMessage::user_text(format!("Please greet {}", args.message))
            })
            .description("Greets someone"),
        )
        .resource(
            ResourceDef::new(
                "file:///example/readme.txt",
                "readme",
                |_cx: RequestContext| async { "This server is an actix-mcp example." },
            )
            .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "greeting://{name}",
                "greeting",
                |vars: UriVars| async move {
                    format!("Hello, {}!", vars.get("name").unwrap_or_default())
                },
            )
            .mime_type("text/plain"),
        )
        .completion(complete_name)
        .build()
        .map_err(std::io::Error::other)
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    // Set up outside the server's runtime: the OTLP exporters run on threads of their own, and
    // the guard, dropped last, flushes them after the server has stopped.
    let _telemetry = telemetry(&cli)?;
    actix_web::rt::System::new().block_on(serve(cli))
}

async fn serve(cli: Cli) -> std::io::Result<()> {
    let server = server(
        &cli.auth_scopes,
        cli.state_key.as_deref(),
        cli.skills.as_deref(),
    )?;
    let mut mcp = server
        .http("/mcp")
        .stateless(cli.stateless)
        .json_response(cli.json_response)
        .admission(admission(&cli))
        .event_store(Arc::new(
            InMemoryEventStore::default().max_server_bytes(cli.event_store_mib * 1024 * 1024),
        ));
    if !cli.stateless {
        // A stateless endpoint has no sessions to cap or expire.
        mcp = mcp.max_sessions(cli.max_sessions).idle_timeout(
            (cli.idle_timeout_s > 0).then(|| Duration::from_secs(cli.idle_timeout_s)),
        );
    }
    if let Some(auth) = bearer_auth(&cli).map_err(std::io::Error::other)? {
        tracing::info!(metadata = auth.metadata_url(), "bearer auth on");
        mcp = mcp.bearer_auth(auth);
    }
    if let Some(cluster) = cluster(&cli).await? {
        tracing::info!(node = %cluster.node_id(), "serving as a node of a cluster on redis");
        mcp = mcp.cluster(cluster);
    }
    let mcp = mcp.build().map_err(std::io::Error::other)?;
    let drain = Duration::from_millis(cli.drain_ms);
    let app = mcp.clone();
    let mut http = actix_web::HttpServer::new(move || {
        actix_web::App::new()
            .configure(app.configure())
            .configure(app.health())
    })
    .tcp_nodelay(true)
    // Without a session, a client that closes its connection cancels its request.
    .h1_allow_half_closed(false)
    // SIGTERM drains the endpoint (below); actix-web's own graceful stop comes after it.
    .disable_signals()
    .shutdown_timeout(drain.as_secs() + 5);
    if let Some(workers) = cli.workers {
        http = http.workers(workers);
    }
    tracing::info!(
        port = cli.port,
        stateless = cli.stateless,
        json_response = cli.json_response,
        "listening on /mcp (health: /healthz, /readyz)"
    );
    let running = http.bind(("127.0.0.1", cli.port))?.run();
    let handle = running.handle();
    actix_web::rt::spawn(async move {
        shutdown_signal().await;
        let report = mcp.drain(drain).await;
        tracing::info!(?report, "drained; stopping");
        handle.stop(true).await;
    });
    running.await
}
