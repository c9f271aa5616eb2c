//! A bearer-protected server and its callers, in one program: a Streamable HTTP endpoint on a
//! free loopback port whose own token validator (an async function) accepts one token, a
//! request without a token refused with 401 and the pointer to the protected resource
//! metadata, then our client sending the token and calling `whoami`, which answers with the
//! identity the validator gave; then `audit`, a tool that needs a scope Alice's token lacks,
//! refused with one 403 challenge naming every scope the call needs (SEP-2350).
//!
//! Run: `cargo run --features client-http --example auth` (exits 0 when all of that held).
//!
//! Real servers check JWTs against their authorization server (`JwtValidator`, feature `auth`;
//! see `examples/http_server.rs`); clients get tokens with OAuth (`examples/client.rs`).

use actix_mcp::client::Client;
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::prelude::*;
use actix_mcp::server::auth::{AuthError, BearerAuth, Identity};

/// The one token the server accepts: Alice's.
const TOKEN: &str = "alice-token";

/// The server's validator: Alice's token gives her identity and scope `mcp`.
async fn validate(token: String) -> Result<Identity, AuthError> {
    match token.as_str() {
        TOKEN => Ok(Identity::new("alice").with_scopes(["mcp"])),
        _ => Err(AuthError::invalid_token("unknown token")),
    }
}

/// Answers with the caller: the subject and scopes the validator gave.
async fn whoami(cx: RequestContext) -> Result<String, McpError> {
    let caller = cx.identity().ok_or_else(|| McpError::tool("no caller"))?;
    let subject = caller.subject().unwrap_or("no subject");
    Ok(format!("{subject} (scopes: {})", caller.scopes().join(" ")))
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Bound first: the resource URL (the tokens' audience) names the port.
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let auth = BearerAuth::builder(&url, validate)
        .authorization_server("https://auth.example.com")
        .build()?;
    let server = Server::builder("auth-example", "1.0.0")
        .required_scopes(["mcp"])
        .tool(ToolDef::new("whoami", whoami).description("Says who is calling"))
        .tool(
            ToolDef::new("audit", || async { "the audit log" })
                .description("Reads the audit log")
                .required_scopes(["audit:read"]),
        )
        .build()?;
    let mcp = server.http("/mcp").bearer_auth(auth).build()?;
    let app = move || actix_web::App::new().configure(mcp.configure());
    actix_web::rt::spawn(actix_web::HttpServer::new(app).listen(listener)?.run());

    // Without a token: refused before the body is read, with the metadata's URL.
    let refused = reqwest::Client::new().post(&url).send().await?;
    let challenge = refused.headers().get("www-authenticate");
    let challenge = challenge
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    println!("without a token: {} {challenge}", refused.status());
    if refused.status() != 401 || !challenge.contains("resource_metadata=") {
        return Err("a request without a token was not refused".into());
    }

    let options = HttpOptions::default().bearer_token(TOKEN);
    let client = Client::builder("auth-example", "1.0.0")
        .connect(HttpTransport::with_options(&url, options))
        .await?;
    let answer = client.call_tool("whoami", ()).await?;
    println!("with the token: whoami = {}", answer.text_content());
    client.close().await;

    // A call that needs more than the token holds: one 403 naming every scope it needs (the
    // server's and the tool's), before the tool runs.
    let http = reqwest::Client::new();
    let post = |body: serde_json::Value| {
        http.post(&url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
    };
    let init = post(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .send()
    .await?;
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let call = post(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "audit", "arguments": {}}}),
    )
    .header("mcp-session-id", &session)
    .header("mcp-protocol-version", "2025-11-25")
    .send()
    .await?;
    let challenge = call
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    println!("audit without its scope: {} {challenge}", call.status());
    if call.status() != 403
        || !challenge.contains("error=\"insufficient_scope\"")
        || !challenge.contains("scope=\"mcp audit:read\"")
        || !challenge.contains("resource_metadata=")
    {
        return Err("the call was not refused with one challenge naming every scope".into());
    }
    Ok(())
}
