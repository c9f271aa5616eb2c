//! The Skills extension on our client, as the specification asks of hosts, against our server
//! (in memory): every page listed, one skill confirmed, `SKILL.md` fetched only when asked and
//! verified (digest, size, frontmatter field by field), unlisted files refused without asking
//! the server, verified files cached by server identity and URI, tampering refused.
#![cfg(all(feature = "skills", feature = "client", feature = "server"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_mcp::client::skills::{SkillCache, SkillLoadError};
use actix_mcp::client::{Client, ClientError};
use actix_mcp::{Flow, Middleware, Server, ServerBuilder};
use serde_json::json;

use common::within;

const REFUNDS: &str = "skill://acme/billing/refunds/SKILL.md";

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

/// A skills server counting its `resources/read`s.
fn counted(reads: &Arc<AtomicUsize>) -> ServerBuilder {
    let reads = reads.clone();
    Server::builder("skills-server", "1.0.0")
        .skills_dir(fixtures())
        .page_size(2)
        .middleware(Middleware::new("count").before(move |request| {
            if request.method() == "resources/read" {
                reads.fetch_add(1, Ordering::SeqCst);
            }
            Flow::Continue
        }))
}

async fn connect(server: &Server) -> Client {
    within(actix_mcp::testing::connect(
        server,
        Client::builder("host", "1.0.0"),
    ))
    .await
    .unwrap()
}

#[actix_rt::test]
async fn a_host_lists_confirms_and_loads_skills_verified_and_on_demand() {
    let reads = Arc::new(AtomicUsize::new(0));
    let server = counted(&reads).build().unwrap();
    let client = connect(&server).await;
    assert!(client.serves_skills());

    // Every page (two per page here).
    let skills = within(client.skills()).await.unwrap();
    let names: Vec<&str> = skills.iter().filter_map(|s| s.name()).collect();
    assert_eq!(names, ["refunds", "git-workflow", "pdf-processing"]);
    let refunds = within(client.skill(REFUNDS)).await.unwrap();
    assert_eq!(refunds, skills[0]);
    assert!(matches!(
        within(client.skill("skill://acme/billing/refunds/examples/email.md")).await,
        Err(ClientError::Rpc(error)) if error.code.0 == -32602
    ));
    // Listing and confirming read nothing.
    assert_eq!(reads.load(Ordering::SeqCst), 0);

    let loader = client.skill_loader();
    let active = loader.activate(&refunds);
    assert_eq!(
        reads.load(Ordering::SeqCst),
        0,
        "activation fetches nothing"
    );
    let instructions = within(active.instructions()).await.unwrap();
    assert!(instructions.contains("# Refunds"), "{instructions}");
    assert_eq!(reads.load(Ordering::SeqCst), 1);
    let email = within(active.file("examples/email.md")).await.unwrap();
    assert_eq!(&*email, b"Dear customer, your refund is on its way.\n");
    assert_eq!(reads.load(Ordering::SeqCst), 2);

    // From the cache: verified once, not read again.
    within(active.instructions()).await.unwrap();
    within(active.file(&format!("{}/examples/email.md", refunds.root())))
        .await
        .unwrap();
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    assert_eq!(loader.cached(), 2);

    // Files the entry does not list are refused without asking the server.
    for unlisted in [
        "examples/other.md",
        "../git-workflow/SKILL.md",
        "skill://git-workflow/SKILL.md",
    ] {
        assert!(
            matches!(
                within(active.file(unlisted)).await,
                Err(SkillLoadError::Unlisted { .. })
            ),
            "{unlisted}"
        );
    }
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    within(client.close()).await;
}

#[actix_rt::test]
async fn tampered_files_and_frontmatter_are_refused() {
    let reads = Arc::new(AtomicUsize::new(0));
    // The server changes the email's text on the way out: its digest no longer matches.
    let server = counted(&reads)
        .middleware(Middleware::new("tamper").after(|request, outcome| {
            if request.param("uri")
                == Some(&json!("skill://acme/billing/refunds/examples/email.md"))
                && let Some(mut result) = outcome.result()
            {
                result["contents"][0]["text"] = json!("Dear customer, no refund.\n");
                outcome.set_result(&result);
            }
        }))
        .build()
        .unwrap();
    let client = connect(&server).await;
    let mut refunds = within(client.skill(REFUNDS)).await.unwrap();
    let loader = client.skill_loader();
    assert!(matches!(
        within(loader.activate(&refunds).file("examples/email.md")).await,
        Err(SkillLoadError::Mismatch { .. })
    ));
    // An entry whose frontmatter differs from the SKILL.md it describes.
    refunds
        .frontmatter
        .insert("description".into(), json!("Something else"));
    let error = within(loader.activate(&refunds).instructions())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, SkillLoadError::Frontmatter { reason, .. } if reason.contains("description")),
        "{error}"
    );
    assert_eq!(loader.cached(), 1, "only the verified SKILL.md bytes");
    within(client.close()).await;
}

#[actix_rt::test]
async fn the_cache_keeps_servers_apart_and_a_server_without_skills_is_not_asked() {
    let cache = SkillCache::default();
    let reads = Arc::new(AtomicUsize::new(0));
    let first = connect(&counted(&reads).build().unwrap()).await;
    let second = connect(&counted(&reads).build().unwrap()).await;
    for (client, identity) in [(&first, "first"), (&second, "second")] {
        let loader = client
            .skill_loader()
            .identity(identity)
            .cache(cache.clone());
        let skill = within(client.skill(REFUNDS)).await.unwrap();
        within(loader.activate(&skill).instructions())
            .await
            .unwrap();
    }
    // The same URI from two servers: read and kept twice.
    assert_eq!(reads.load(Ordering::SeqCst), 2);
    assert_eq!(cache.len(), 2);

    let plain = Server::builder("plain", "1.0.0").build().unwrap();
    let client = connect(&plain).await;
    assert!(!client.serves_skills());
    assert!(matches!(
        within(client.skills()).await,
        Err(ClientError::Unsupported(_))
    ));
    within(client.close()).await;
}
