//! One node of a cluster: a Streamable HTTP server whose sessions, stream events and messages
//! live on Redis, so several such processes behind any load balancer (no sticky routing) serve
//! the same sessions.
//!
//! Run two nodes on one Redis, then begin a session on one and go on with it on the other:
//!
//! ```sh
//! cargo run --features redis --example cluster -- redis://127.0.0.1:6379 8080
//! cargo run --features redis --example cluster -- redis://127.0.0.1:6379 8081
//! ```
//!
//! Each serves `http://127.0.0.1:PORT/mcp` with one tool, `whoami`, which says which node
//! answered and in which session.

use actix_mcp::cluster::Cluster;
use actix_mcp::prelude::*;

#[actix_web::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(redis), Some(port)) = (args.next(), args.next()) else {
        return Err("usage: cluster REDIS_URL PORT".into());
    };
    let port: u16 = port.parse()?;

    // The session store, the event store and the bus, all on Redis; this node's id is random.
    let cluster = Cluster::redis(&redis).await?;
    let node = cluster.node_id().clone();
    println!("node {node}: serving http://127.0.0.1:{port}/mcp");
    let server = Server::builder("cluster-node", "1.0.0")
        .tool(
            ToolDef::new("whoami", move |cx: RequestContext| {
                let session = cx.session_id().map_or("none".into(), ToString::to_string);
                let text = format!("node {node}, session {session}");
                async move { text }
            })
            .description("Says which node answered, and in which session"),
        )
        .build()?;
    let mcp = server.http("/mcp").cluster(cluster).build()?;
    actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .bind(("127.0.0.1", port))?
        .run()
        .await?;
    Ok(())
}
