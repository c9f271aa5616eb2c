//! Every fixture the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance server --requirements 2025-11-25`), served over
//! Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
//!
//! Run: `cargo run --example conformance_server -- --port 3001`
//!
//! This file holds the command line and the server's assembly; the fixtures are in modules by
//! the set that calls them: [`base`] (2025-11-25, also called in 2026-07-28), [`v2026`]
//! (only the 2026-07-28 set), [`mrtr`] (multi round-trip requests) and [`tasks`] (the Tasks
//! extension).

mod base;
mod mrtr;
mod tasks;
mod v2026;

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::ElicitationSchema;
use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser)]
struct Cli {
    /// Port to listen on (127.0.0.1).
    #[arg(long, default_value_t = 3001)]
    port: u16,
    /// Serve as one node of a cluster sharing its sessions, events and tasks on the Redis
    /// server at URL (needs `--features redis`).
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// Seal `requestState` with this key (64 hex digits), the same on every node of a cluster
    /// (default: a random key per process).
    #[arg(long, value_name = "HEX")]
    state_key: Option<String>,
    /// With `--redis`: how long, in milliseconds, a node serves a session it holds without
    /// reading its record (0, the default: every request reads it; see `Cluster::session_lease`).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    session_lease_ms: u64,
    /// With `--redis`: keep requests' SSE streams in this node's memory only; another node asks
    /// for them on the bus (see `RedisEventStore::request_streams_on_node`).
    #[arg(long)]
    request_streams_on_node: bool,
}

/// The cluster and task store of `--redis`.
#[cfg(feature = "redis")]
async fn on_redis(
    url: &str,
    requests_on_node: bool,
) -> std::io::Result<(actix_mcp::cluster::Cluster, Arc<dyn actix_mcp::TaskStore>)> {
    use actix_mcp::cluster::redis::{Redis, RedisEventStore, RedisTaskStore};
    let redis = Redis::connect(url, "mcp")
        .await
        .map_err(std::io::Error::other)?;
    let tasks: Arc<dyn actix_mcp::TaskStore> = Arc::new(RedisTaskStore::new(redis.clone()));
    let mut cluster = actix_mcp::cluster::Cluster::on_redis(redis.clone());
    if requests_on_node {
        cluster = cluster.event_store(Arc::new(
            RedisEventStore::new(redis).request_streams_on_node(),
        ));
    }
    Ok((cluster, tasks))
}

#[cfg(not(feature = "redis"))]
async fn on_redis(
    _: &str,
    _: bool,
) -> std::io::Result<(actix_mcp::cluster::Cluster, Arc<dyn actix_mcp::TaskStore>)> {
    Err(std::io::Error::other(
        "--redis needs the `redis` feature: cargo run --features redis --example conformance_server",
    ))
}

fn no_args() -> serde_json::Map<String, Value> {
    json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn schema(value: Value) -> ElicitationSchema {
    serde_json::from_value(value).unwrap_or_else(|err| panic!("fixture schema is valid: {err}"))
}

fn server(
    state_key: Option<&str>,
    task_store: Option<Arc<dyn actix_mcp::TaskStore>>,
) -> Result<Server, actix_mcp::BuildError> {
    let server = base::base_fixtures(Server::builder(
        "actix-mcp-conformance",
        env!("CARGO_PKG_VERSION"),
    ));
    let server = v2026::v2026_fixtures(server);
    let mut server = mrtr::mrtr_fixtures(server);
    if let Some(key) = state_key {
        server = server.request_state_key_hex("cluster", key);
    }
    let server = tasks::tasks_fixtures(server, task_store);
    server.build()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let cluster = match &cli.redis {
        Some(url) => Some(on_redis(url, cli.request_streams_on_node).await?),
        None => None,
    };
    let server = server(
        cli.state_key.as_deref(),
        cluster.as_ref().map(|(_, tasks)| tasks.clone()),
    )
    .map_err(std::io::Error::other)?;
    let mut mcp = server.http("/mcp").retry(Duration::from_millis(500));
    if let Some((cluster, _)) = cluster {
        tracing::info!(node = %cluster.node_id(), "serving as a node of a cluster");
        mcp = mcp.cluster(cluster.session_lease(Duration::from_millis(cli.session_lease_ms)));
    }
    let mcp = mcp.build().map_err(std::io::Error::other)?;
    tracing::info!(port = cli.port, "conformance server listening");
    actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .tcp_nodelay(true)
        .bind(("127.0.0.1", cli.port))?
        .run()
        .await
}
