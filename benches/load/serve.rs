//! The server roles of the load benchmark, run in a child process: the MCP server of
//! `examples/http_server.rs` (`--serve-mcp`) and the bare actix-web handler (`--serve-bare`).

use std::io::{Read, Write};

use actix_mcp::prelude::*;
use actix_web::{App, HttpResponse, HttpServer, web};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Result, SERVER_LIFETIME};

/// Arguments of `echo`, as in `examples/http_server.rs`.
#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
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

fn workers(arg: Option<&String>) -> Result<Option<usize>> {
    let workers: usize = arg.ok_or("missing WORKERS")?.parse()?;
    Ok((workers > 0).then_some(workers))
}

fn announce(addrs: &[std::net::SocketAddr]) -> Result<()> {
    let port = addrs.first().ok_or("not bound")?.port();
    let mut out = std::io::stdout().lock();
    writeln!(out, "LISTENING {port}")?;
    out.flush()?;
    Ok(())
}

/// `--serve-mcp MODE WORKERS MAX_SESSIONS`.
pub(super) fn mcp(args: &[String]) -> Result<()> {
    watch_parent();
    let (stateless, json_response) = match args.first().map(String::as_str) {
        Some("sse") => (false, false),
        Some("json") => (false, true),
        Some("stateless") => (true, true),
        other => return Err(format!("unknown mode {other:?}").into()),
    };
    let workers = workers(args.get(1))?;
    let max_sessions: usize = args.get(2).ok_or("missing MAX_SESSIONS")?.parse()?;
    let server = Server::builder("actix-mcp-load", env!("CARGO_PKG_VERSION"))
        .tool(tool(
            "echo",
            "Returns its message unchanged",
            |Params(args): Params<EchoArgs>| async move { args.message },
        ))
        .build()?;
    let mcp = server
        .http("/mcp")
        .stateless(stateless)
        .json_response(json_response)
        .max_sessions(max_sessions);
    actix_web::rt::System::new().block_on(async move {
        let mut http = HttpServer::new(move || App::new().configure(mcp.configure()))
            .tcp_nodelay(true)
            .disable_signals();
        if let Some(workers) = workers {
            http = http.workers(workers);
        }
        let http = http.bind(("127.0.0.1", 0))?;
        announce(&http.addrs())?;
        http.run().await?;
        Ok(())
    })
}

/// The bare handler: parses the JSON-RPC request and answers what `echo` answers.
async fn bare_echo(body: web::Bytes) -> HttpResponse {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return HttpResponse::BadRequest().finish();
    };
    let text = request
        .pointer("/params/arguments/message")
        .cloned()
        .unwrap_or(Value::Null);
    let response = json!({
        "jsonrpc": "2.0",
        "id": request.get("id"),
        "result": { "content": [{ "type": "text", "text": text }] },
    });
    HttpResponse::Ok()
        .content_type("application/json")
        .body(response.to_string())
}

/// `--serve-bare WORKERS`.
pub(super) fn bare(args: &[String]) -> Result<()> {
    watch_parent();
    let workers = workers(args.first())?;
    actix_web::rt::System::new().block_on(async move {
        let mut http = HttpServer::new(|| App::new().route("/mcp", web::post().to(bare_echo)))
            .tcp_nodelay(true)
            .disable_signals();
        if let Some(workers) = workers {
            http = http.workers(workers);
        }
        let http = http.bind(("127.0.0.1", 0))?;
        announce(&http.addrs())?;
        http.run().await?;
        Ok(())
    })
}
