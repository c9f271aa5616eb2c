//! A client connected to a server in memory, for an application's own tests (features
//! `server` and `client`): no process, no port, the same messages as over stdio.
//!
//! ```
//! use actix_mcp::client::Client;
//! use actix_mcp::{Server, ToolDef};
//!
//! # actix_rt::System::new().block_on(async {
//! let server = Server::builder("under-test", "1.0.0")
//!     .tool(ToolDef::new("ping", || async { "pong" }))
//!     .build()
//!     .expect("a valid server");
//! let client = actix_mcp::testing::connect(&server, Client::builder("test", "1.0.0"))
//!     .await
//!     .expect("connected");
//! let result = client.call_tool("ping", ()).await.expect("answered");
//! assert_eq!(result.text_content(), "pong");
//! client.close().await;
//! # });
//! ```

use crate::Server;
use crate::client::transport::IoTransport;
use crate::client::{Client, ClientBuilder, ClientError};
use crate::transport::stdio::StdioConfig;

/// The in-memory pipe's buffer, each way.
const PIPE_BYTES: usize = 1 << 20;

/// Connects `client` to `server` through an in-memory pipe and returns the connected client.
/// The server's side ends when the client closes (or is dropped).
///
/// Inside an actix system (`#[actix_rt::test]`, `#[actix_web::test]`) the server runs on the
/// current arbiter; elsewhere (`#[tokio::test]`) on the actix system the client runs on then
/// ([`ClientBuilder::connect`]).
///
/// # Errors
/// As [`ClientBuilder::connect`].
pub async fn connect(server: &Server, client: ClientBuilder) -> Result<Client, ClientError> {
    let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = server.clone();
    let serve = move || async move {
        if let Err(err) = server
            .serve_io(server_read, server_write, StdioConfig::default())
            .await
        {
            tracing::debug!(%err, "the in-memory server stopped");
        }
    };
    let (client_read, client_write) = tokio::io::split(client_end);
    let transport = IoTransport::new(client_read, client_write);
    if actix_rt::System::try_current().is_some() {
        actix_rt::spawn(serve());
        return client.connect(transport).await;
    }
    // The client's own system: held here until the client holds it too.
    let runtime = crate::client::runtime::ClientRuntime::acquire()?;
    runtime.arbiter().spawn_fn(move || {
        actix_rt::spawn(serve());
    });
    let connected = client.connect(transport).await;
    drop(runtime);
    connected
}
