//! `examples/http_server.rs --skills DIR` serves the skills of `DIR` to our client, verified.

use actix_mcp::client::Client;
use actix_mcp::client::transport::HttpTransport;

use super::serve;
use crate::common::within;

#[tokio::test]
async fn the_example_server_serves_a_skills_directory() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/skills");
    let served = serve("http_server", &["--port", "{port}", "--skills", dir]).await;
    let client = within(Client::builder("host", "1.0.0").connect(HttpTransport::new(&served.url)))
        .await
        .unwrap();
    let skills = within(client.skills()).await.unwrap();
    assert_eq!(skills.len(), 3);
    let loader = client.skill_loader();
    let git = skills
        .iter()
        .find(|skill| skill.name() == Some("git-workflow"))
        .unwrap();
    let instructions = within(loader.activate(git).instructions()).await.unwrap();
    assert!(instructions.contains("# Git workflow"), "{instructions}");
    within(client.close()).await;
}
