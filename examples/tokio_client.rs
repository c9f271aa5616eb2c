//! The client in a plain tokio application: no actix system, no actix attribute. The SDK runs
//! the client's actors on a thread of its own, stopped once the last client is dropped.
//!
//! Run (with `examples/http_server` listening on port 8080):
//!
//! ```sh
//! cargo run --features client-http --example tokio_client -- http://127.0.0.1:8080/mcp
//! cargo run --features client-http --example tokio_client -- http://127.0.0.1:8080/mcp echo '{"message":"hi"}'
//! ```
//!
//! Connects to the URL given first, lists the server's tools, calls one (`echo` with a message
//! unless a tool and its JSON arguments follow the URL) and prints its text.

use actix_mcp::client::Client;
use actix_mcp::client::transport::HttpTransport;
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: tokio_client URL [TOOL [ARGUMENTS-AS-JSON]]")?;
    let tool = args.next().unwrap_or_else(|| "echo".to_owned());
    let arguments: Value = match args.next() {
        Some(text) => serde_json::from_str(&text)?,
        None => json!({ "message": "hello from tokio" }),
    };

    let client = Client::builder("tokio-client", "1.0.0")
        .connect(HttpTransport::new(&url))
        .await?;
    println!(
        "connected to {} {} ({})",
        client.server_info().name,
        client.server_info().version,
        client.protocol_version().as_str()
    );
    for tool in client.tools().await? {
        println!(
            "tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }
    let result = client.call_tool(&tool, arguments).await?;
    println!("{tool}: {}", result.text_content());
    client.close().await;
    Ok(())
}
