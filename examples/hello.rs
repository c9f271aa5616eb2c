//! The smallest server: one typed tool, served over stdio or Streamable HTTP.
//!
//! ```sh
//! cargo run --example hello                 # stdio: JSON-RPC lines on stdin and stdout
//! cargo run --example hello -- --http 8080  # Streamable HTTP at http://127.0.0.1:8080/mcp
//! ```

use actix_mcp::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `add`: the schema the client sees comes from this type and its doc comments.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// Adds two numbers.
async fn add(Params(args): Params<AddArgs>) -> Result<String, McpError> {
    let sum = args
        .a
        .checked_add(args.b)
        .ok_or_else(|| McpError::tool("overflow"))?;
    Ok(sum.to_string())
}

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("hello", "1.0.0")
        .tool(ToolDef::new("add", add).description("Adds two integers"))
        .build()?;

    let mut args = std::env::args().skip(1);
    let Some(port) = args.next().filter(|flag| flag == "--http").and(args.next()) else {
        return Ok(server.serve_stdio().await?);
    };
    let mcp = server.http("/mcp").build()?;
    actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .bind(("127.0.0.1", port.parse::<u16>()?))?
        .run()
        .await?;
    Ok(())
}
