//! The Skills extension (`io.modelcontextprotocol/skills`) on the server, served from
//! `tests/fixtures/skills`: declared in `initialize` and `server/discover` with `resources`;
//! `skills/list`, `skills/get`, `resources/read` and `resources/directory/read` in both eras
//! (2026 results complete, with cache hints), in process, over the stdio framing and over
//! HTTP; traversal refused; a malformed directory refused at build; a reload announced.
#![cfg(all(feature = "skills", feature = "http", feature = "client-http"))]
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_mcp::client::transport::HttpTransport;
use actix_mcp::client::{Client, Lifecycle};
use actix_mcp::server::skills::Skills;
use actix_mcp::{BuildError, Server};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use common::within;

const EXT: &str = "io.modelcontextprotocol/skills";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills")
}

fn server() -> Server {
    Server::builder("skills-test", "1.0.0")
        .skills_dir(fixtures())
        .build()
        .unwrap()
}

/// One request in process, in `era` (2026: with its envelope); the whole response.
async fn call(server: &Server, v2026: bool, method: &str, mut params: Value) -> Value {
    if v2026 {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let answer = within(server.handle_json(&request.to_string()))
        .await
        .unwrap();
    serde_json::from_str(&answer).unwrap()
}

fn digest(path: &str) -> String {
    let bytes = std::fs::read(fixtures().join(path)).unwrap();
    let hex: String = Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

#[actix_rt::test]
async fn skills_are_declared_listed_got_and_read_in_both_eras() {
    let server = server();
    let init = call(
        &server,
        false,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXT], json!({"directoryRead": true}));
    assert!(caps["resources"].is_object(), "{caps}");
    let discover = call(&server, true, "server/discover", json!({})).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXT], json!({"directoryRead": true}));
    assert!(caps["resources"].is_object(), "{caps}");

    for v2026 in [false, true] {
        let list = call(&server, v2026, "skills/list", json!({})).await;
        let result = &list["result"];
        let uris: Vec<&str> = result["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skill| skill["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "skill://acme/billing/refunds/SKILL.md",
                "skill://git-workflow/SKILL.md",
                "skill://pdf-processing/SKILL.md"
            ]
        );
        let git = &result["skills"][1];
        assert_eq!(
            git["frontmatter"],
            json!({"name": "git-workflow",
                   "description": "Branch, commit and open a pull request the way this team does.",
                   "license": "MIT", "metadata": {"owner": "platform"}})
        );
        let pdf = &result["skills"][2];
        let files = pdf["resources"].as_array().unwrap();
        assert_eq!(files.len(), 4, "{pdf}");
        let logo = files
            .iter()
            .find(|f| f["uri"] == "skill://pdf-processing/assets/logo.png")
            .unwrap();
        assert_eq!(logo["digest"], digest("pdf-processing/assets/logo.png"));
        assert_eq!(logo["size"], 12);
        if v2026 {
            // Complete, with the cache hints every cacheable 2026 result carries.
            assert_eq!(result["resultType"], "complete", "{result}");
            assert_eq!(result["ttlMs"], 0, "{result}");
            assert_eq!(result["cacheScope"], "private", "{result}");
        } else {
            assert!(result.get("ttlMs").is_none(), "{result}");
        }

        let got = call(
            &server,
            v2026,
            "skills/get",
            json!({"uri": "skill://acme/billing/refunds/SKILL.md"}),
        )
        .await;
        assert_eq!(got["result"]["skill"]["frontmatter"]["name"], "refunds");
        if v2026 {
            assert_eq!(got["result"]["resultType"], "complete");
            assert!(got["result"]["ttlMs"].is_number(), "{got}");
        }
        for not_a_skill in [
            "skill://acme/billing/refunds/examples/email.md",
            "skill://acme/billing/SKILL.md",
            "skill://nope/SKILL.md",
            "file:///etc/passwd",
        ] {
            let refused = call(&server, v2026, "skills/get", json!({"uri": not_a_skill})).await;
            assert_eq!(refused["error"]["code"], -32602, "{not_a_skill}: {refused}");
        }
        let missing = call(&server, v2026, "skills/get", json!({})).await;
        assert_eq!(missing["error"]["code"], -32602, "{missing}");

        // Every file is a resource: SKILL.md as markdown, binaries as blobs.
        let read = call(
            &server,
            v2026,
            "resources/read",
            json!({"uri": "skill://git-workflow/SKILL.md"}),
        )
        .await;
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["mimeType"], "text/markdown", "{read}");
        assert_eq!(
            contents["text"].as_str().unwrap(),
            std::fs::read_to_string(fixtures().join("git-workflow/SKILL.md")).unwrap()
        );
        let blob = call(
            &server,
            v2026,
            "resources/read",
            json!({"uri": "skill://pdf-processing/assets/logo.png"}),
        )
        .await;
        let contents = &blob["result"]["contents"][0];
        assert_eq!(contents["mimeType"], "image/png", "{blob}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(contents["blob"].as_str().unwrap())
            .unwrap();
        assert_eq!(
            bytes,
            std::fs::read(fixtures().join("pdf-processing/assets/logo.png")).unwrap()
        );

        // Directories: direct children only, subdirectories as inode/directory.
        let dir = call(
            &server,
            v2026,
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing"}),
        )
        .await;
        let mut children: Vec<(String, String)> = dir["result"]["resources"]
            .as_array()
            .unwrap_or_else(|| panic!("{dir}"))
            .iter()
            .map(|r| {
                (
                    r["uri"].as_str().unwrap().to_owned(),
                    r["mimeType"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        children.sort();
        assert_eq!(
            children,
            [
                (
                    "skill://pdf-processing/SKILL.md".into(),
                    "text/markdown".into()
                ),
                (
                    "skill://pdf-processing/assets".into(),
                    "inode/directory".into()
                ),
                (
                    "skill://pdf-processing/references".into(),
                    "inode/directory".into()
                ),
                (
                    "skill://pdf-processing/scripts".into(),
                    "inode/directory".into()
                ),
            ]
        );
        let not_dir = call(
            &server,
            v2026,
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        )
        .await;
        assert_eq!(not_dir["error"]["code"], -32602, "{not_dir}");
    }
}

#[actix_rt::test]
async fn nothing_outside_the_skills_is_ever_served() {
    let server = server();
    for v2026 in [false, true] {
        for uri in [
            "skill://pdf-processing/../git-workflow/SKILL.md",
            "skill://pdf-processing/%2e%2e/%2e%2e/Cargo.toml",
            "skill://pdf-processing/references%2F..%2F..%2FSKILL.md",
            "skill:///etc/passwd",
            "skill://pdf-processing//etc/passwd",
            "skill://../../Cargo.toml",
        ] {
            let answer = call(&server, v2026, "resources/read", json!({"uri": uri})).await;
            let code = answer["error"]["code"].as_i64();
            assert!(
                matches!(code, Some(-32602 | -32002)),
                "{uri} was served: {answer}"
            );
        }
    }
    // resources/list names the SKILL.md of every skill, nothing else.
    let list = call(&server, false, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris.len(), 3, "{list}");
    assert!(
        uris.iter().all(|uri| uri.ends_with("/SKILL.md")),
        "{uris:?}"
    );
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("actix-mcp-skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n")
}

#[test]
fn a_malformed_skills_directory_fails_the_build() {
    let dir = Scratch::new("mismatch");
    dir.write("refunds/SKILL.md", &skill_md("payments"));
    let refused = Server::builder("x", "1")
        .skills_dir(&dir.0)
        .build()
        .expect_err("refused");
    assert!(
        matches!(&refused, BuildError::Skills(message) if message.contains("refunds")),
        "{refused}"
    );
    let dir = Scratch::new("badname");
    dir.write("Bad_Name/SKILL.md", &skill_md("Bad_Name"));
    assert!(matches!(
        Server::builder("x", "1").skills_dir(&dir.0).build(),
        Err(BuildError::Skills(_))
    ));
    assert!(matches!(
        Server::builder("x", "1")
            .skills_dir(dir.0.join("missing"))
            .build(),
        Err(BuildError::Skills(_))
    ));
}

#[actix_rt::test]
async fn a_reload_serves_the_new_skills_and_tells_clients_over_stdio_framing() {
    let dir = Scratch::new("reload");
    dir.write("first/SKILL.md", &skill_md("first"));
    let skills = Skills::load(&dir.0).unwrap();
    let server = Server::builder("reload", "1.0.0")
        .extension(skills.extension())
        .build()
        .unwrap();
    let changes = Arc::new(AtomicUsize::new(0));
    let heard = changes.clone();
    let client = within(actix_mcp::testing::connect(
        &server,
        Client::builder("reload-client", "1.0.0")
            .lifecycle(Lifecycle::V2025)
            .on_resources_list_changed(move || {
                heard.fetch_add(1, Ordering::SeqCst);
            }),
    ))
    .await
    .unwrap();
    let listed = |value: Value| -> Vec<String> {
        value["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["uri"].as_str().unwrap().to_owned())
            .collect()
    };
    let before: Value = within(client.request("skills/list", None, Default::default()))
        .await
        .unwrap();
    assert_eq!(listed(before), ["skill://first/SKILL.md"]);

    dir.write("second/SKILL.md", &skill_md("second"));
    skills.reload().unwrap();
    common::eventually("the list change", || {
        (changes.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    let after: Value = within(client.request("skills/list", None, Default::default()))
        .await
        .unwrap();
    assert_eq!(
        listed(after),
        ["skill://first/SKILL.md", "skill://second/SKILL.md"]
    );

    // A reload that fails keeps what was served.
    dir.write("third/SKILL.md", &skill_md("not-third"));
    assert!(skills.reload().is_err());
    assert_eq!(skills.set().len(), 2);
    within(client.close()).await;
}

#[actix_rt::test]
async fn skills_over_http_in_both_eras() {
    let mcp = server().http("/mcp");
    let running = common::http::spawn(mcp, 1);
    for lifecycle in [Lifecycle::V2025, Lifecycle::V2026] {
        let client = within(
            Client::builder("http-skills", "1.0.0")
                .lifecycle(lifecycle)
                .connect(HttpTransport::new(&running.url)),
        )
        .await
        .unwrap();
        assert_eq!(
            client.server_extension(EXT),
            json!({"directoryRead": true}).as_object()
        );
        let list: Value = within(client.request("skills/list", None, Default::default()))
            .await
            .unwrap();
        assert_eq!(list["skills"].as_array().unwrap().len(), 3, "{list}");
        let read = within(client.read_resource("skill://acme/billing/refunds/examples/email.md"))
            .await
            .unwrap();
        assert_eq!(
            read.text_content(),
            "Dear customer, your refund is on its way.\n"
        );
        within(client.close()).await;
    }
}

/// Two nodes sharing their sessions (the in-memory store and bus the Redis ones stand in for):
/// a session initialized on one reads skills on the other, each node serving the same
/// directory.
#[actix_rt::test]
async fn skills_across_cluster_nodes() {
    use actix_mcp::cluster::{Bus, Cluster, InMemorySessionStore, LocalBus, SessionStore};
    let store = Arc::new(InMemorySessionStore::new());
    let bus = Arc::new(LocalBus::new());
    let [a, b] = [0, 1].map(|_| {
        let cluster = Cluster::new(
            store.clone() as Arc<dyn SessionStore>,
            bus.clone() as Arc<dyn Bus>,
        );
        common::http::spawn(server().http("/mcp").cluster(cluster), 1)
    });
    let mut on_a = a.client();
    on_a.initialize(json!({})).await;
    let on_b = on_a.at(&b.url);
    let listed = on_b.request(json!(1), "skills/list", json!({})).await;
    assert_eq!(
        listed.response["result"]["skills"].as_array().map(Vec::len),
        Some(3),
        "{}",
        listed.response
    );
    let read = on_b
        .request(
            json!(2),
            "resources/read",
            json!({"uri": "skill://git-workflow/SKILL.md"}),
        )
        .await;
    assert_eq!(
        read.response["result"]["contents"][0]["mimeType"], "text/markdown",
        "{}",
        read.response
    );
    a.stop().await;
    b.stop().await;
}
