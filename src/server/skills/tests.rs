//! The wire results over a fixture tree: two top-level skills (one holding a nested skill), a
//! prefixed skill, text and binary files, a name with a space, and skills built in code.

use std::sync::Arc;

use serde_json::json;
use sha2::{Digest, Sha256};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::load::tests::TempTree;
use super::{SkillDef, SkillError, SkillSet};
use crate::error::ErrorKind;
use crate::error::McpError;
use crate::protocol::ResourceContents;

const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00, 0xfe,
];

/// Two top-level skills (one holding a nested skill), a prefixed one, text, binary and a
/// name with a space; plus a dynamic and a listed skill built in code.
fn fixture() -> (TempTree, SkillSet) {
    let tree = TempTree::new("wire");
    tree.skill("git-workflow")
        .write("git-workflow/scripts/run.sh", "#!/bin/sh\necho hi\n")
        .write("git-workflow/assets/logo.png", PNG)
        .write("git-workflow/docs/a b.md", "spaced")
        .write(
            "pdf-processing/SKILL.md",
            "---\nname: pdf-processing\ndescription: Work with PDFs\nlicense: MIT\n\
             metadata:\n  version: \"2.1\"\n---\n# PDF\n",
        )
        .write("pdf-processing/templates/invoice.md", "invoice")
        .skill("pdf-processing/forms")
        .write("pdf-processing/forms/ref.md", "forms ref")
        .skill("acme/billing/refunds")
        .write("acme/billing/refunds/examples/email.md", "email");
    let reader: super::SkillReader =
        Arc::new(|file: &str| (file == "data/today.json").then(|| b"{\"n\":1}".to_vec()));
    let set = SkillSet::builder()
        .dir(&tree.0)
        .skill(SkillDef::dynamic(
            "reports/daily",
            "---\nname: daily\ndescription: Today's report\n---\n",
            reader,
        ))
        .skill(
            SkillDef::new("tools/lint", "---\nname: lint\ndescription: Lint\n---\n")
                .file("rules/style.toml", "x = 1"),
        )
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    (tree, set)
}

fn sha(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn invalid(result: Result<Value, McpError>) -> bool {
    matches!(result, Err(e) if e.kind() == ErrorKind::InvalidParams)
}

fn read_ok(set: &SkillSet, uri: &str) -> ResourceContents {
    match set.read(uri) {
        Some(Ok(mut result)) if result.contents.len() == 1 => result.contents.remove(0),
        other => panic!("{uri}: {other:?}"),
    }
}

#[test]
fn list_pages_through_sorted_entries_with_digests_and_sizes() {
    let (tree, set) = fixture();
    let mut skills = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = set
            .list(cursor.as_deref(), Some(2))
            .unwrap_or_else(|e| panic!("{e}"));
        pages += 1;
        skills.extend(page["skills"].as_array().cloned().unwrap_or_default());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let uris: Vec<&str> = skills.iter().filter_map(|s| s["uri"].as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://git-workflow/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/forms/SKILL.md",
            "skill://reports/daily/SKILL.md",
            "skill://tools/lint/SKILL.md",
        ]
    );
    assert_eq!(
        set.list(None, None)
            .ok()
            .map(|v| v["skills"].as_array().map(Vec::len)),
        Some(Some(6))
    );
    assert!(invalid(set.list(Some("bogus"), None)));

    let git = &skills[1];
    assert_eq!(
        git.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["uri".into(), "frontmatter".into(), "resources".into()])
    );
    let files: Vec<(&str, &str, u64)> = git["resources"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|r| {
                    Some((
                        r["uri"].as_str()?,
                        r["digest"].as_str()?,
                        r["size"].as_u64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let expect = |rel: &str| {
        let bytes = std::fs::read(tree.0.join("git-workflow").join(rel)).unwrap_or_default();
        (sha(&bytes), bytes.len() as u64)
    };
    let listed: Vec<&str> = files.iter().map(|f| f.0).collect();
    assert_eq!(
        listed,
        [
            "skill://git-workflow/SKILL.md",
            "skill://git-workflow/assets/logo.png",
            "skill://git-workflow/docs/a%20b.md",
            "skill://git-workflow/scripts/run.sh",
        ]
    );
    for ((_, digest, size), rel) in files.iter().zip([
        "SKILL.md",
        "assets/logo.png",
        "docs/a b.md",
        "scripts/run.sh",
    ]) {
        assert_eq!((digest.to_string(), *size), expect(rel), "{rel}");
        assert_eq!(digest.len(), 7 + 64);
    }

    // The nested skill's files are the enclosing skill's too, with the same digests.
    let pdf = &skills[2];
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Work with PDFs", "license": "MIT",
            "metadata": {"version": "2.1"}})
    );
    let pdf_files: Vec<&Value> = pdf["resources"]
        .as_array()
        .map(|l| l.iter().collect())
        .unwrap_or_default();
    for nested in skills[3]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        assert!(pdf_files.contains(&&nested), "{nested}");
    }
    assert_eq!(pdf_files.len(), 4);
    assert_eq!(skills[4]["resources"], json!("dynamic"));
}

#[test]
fn get_answers_served_skills_and_refuses_everything_else() {
    let (_tree, set) = fixture();
    let got = set
        .get("skill://acme/billing/refunds/SKILL.md")
        .unwrap_or_else(|e| panic!("{e}"));
    let listed = set.list(None, None).unwrap_or_default();
    assert_eq!(got.as_object().map(|o| o.len()), Some(1));
    assert_eq!(got["skill"], listed["skills"][0]);
    assert!(set.get("skill://reports/daily/SKILL.md").is_ok());
    assert!(set.get("skill://pdf-processing/forms/SKILL.md").is_ok());
    for uri in [
        "skill://acme/billing/chargebacks/SKILL.md",
        "skill://acme/billing/SKILL.md",
        "skill://acme/billing/refunds",
        "skill://acme/billing/refunds/examples/email.md",
        "skill://git-workflow/../git-workflow/SKILL.md",
        "skill://git-workflow/%2e/SKILL.md",
        "skill:///git-workflow/SKILL.md",
        "file:///git-workflow/SKILL.md",
        "git-workflow/SKILL.md",
    ] {
        let result = set.get(uri);
        assert!(invalid(result.clone()), "{uri}: {result:?}");
    }
    let message = set
        .get("skill://nope/SKILL.md")
        .err()
        .map(|e| e.message().to_owned());
    assert_eq!(
        message.as_deref(),
        Some("No skill is served at skill://nope/SKILL.md")
    );
}

#[test]
fn read_serves_text_blobs_and_skill_md_from_the_snapshot() {
    let (tree, set) = fixture();
    // Changing the directory after the load changes nothing served.
    std::fs::write(tree.0.join("git-workflow/scripts/run.sh"), "changed").unwrap_or_default();
    match read_ok(&set, "skill://git-workflow/scripts/run.sh") {
        ResourceContents::Text(text) => {
            assert_eq!(text.text, "#!/bin/sh\necho hi\n");
            assert_eq!(text.mime_type.as_deref(), Some("application/x-sh"));
        }
        other => panic!("{other:?}"),
    }
    match read_ok(&set, "skill://git-workflow/assets/logo.png") {
        ResourceContents::Blob(blob) => {
            assert_eq!(STANDARD.decode(&blob.blob).ok().as_deref(), Some(PNG));
            assert_eq!(blob.mime_type.as_deref(), Some("image/png"));
        }
        other => panic!("{other:?}"),
    }
    let md = read_ok(&set, "skill://git-workflow/SKILL.md");
    assert_eq!(md.mime_type(), Some("text/markdown"));
    assert_eq!(md.uri(), "skill://git-workflow/SKILL.md");
    let spaced = read_ok(&set, "skill://git-workflow/docs/a%20b.md");
    assert!(matches!(spaced, ResourceContents::Text(t) if t.text == "spaced"));
    assert!(
        matches!(read_ok(&set, "skill://pdf-processing/forms/ref.md"), ResourceContents::Text(t) if t.text == "forms ref")
    );
    assert!(
        matches!(read_ok(&set, "skill://tools/lint/rules/style.toml"), ResourceContents::Text(t) if t.text == "x = 1")
    );

    // Not ours: other schemes and URIs no served skill holds.
    for uri in [
        "file:///etc/passwd",
        "/etc/passwd",
        "skill://nope/SKILL.md",
        "skill://acmex/a",
    ] {
        assert!(set.read(uri).is_none(), "{uri}");
    }
    let kind = |uri: &str| match set.read(uri) {
        Some(Err(e)) => Some(e.kind()),
        _ => None,
    };
    assert_eq!(
        kind("skill://git-workflow/missing.md"),
        Some(ErrorKind::ResourceNotFound)
    );
    assert_eq!(
        kind("skill://git-workflow/scripts"),
        Some(ErrorKind::InvalidParams)
    );
    assert_eq!(kind("skill://acme"), Some(ErrorKind::InvalidParams));
    for uri in [
        "skill://git-workflow/../pdf-processing/SKILL.md",
        "skill://git-workflow/%2e%2e/%2e%2e/etc/passwd",
        "skill://git-workflow/scripts%2Frun.sh",
        "skill://git-workflow/..%2F..%2Fetc%2Fpasswd",
        "skill:///etc/passwd",
        "skill://git-workflow//etc/passwd",
        "skill://git-workflow/scripts/run.sh%00",
        "skill://git-workflow/..\\..\\etc",
    ] {
        assert_eq!(kind(uri), Some(ErrorKind::InvalidParams), "{uri}");
    }
}

#[test]
fn directory_reads_list_direct_children() {
    let (_tree, set) = fixture();
    let names = |uri: &str| -> Vec<(String, String)> {
        let result = set
            .read_directory(uri, None, None)
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        result["resources"]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|r| {
                        (
                            r["uri"].as_str().unwrap_or_default().to_owned(),
                            r["mimeType"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let dir = |uri: &str| (uri.to_owned(), "inode/directory".to_owned());
    let file = |uri: &str, mime: &str| (uri.to_owned(), mime.to_owned());
    assert_eq!(
        names("skill://git-workflow"),
        [
            file("skill://git-workflow/SKILL.md", "text/markdown"),
            dir("skill://git-workflow/assets"),
            dir("skill://git-workflow/docs"),
            dir("skill://git-workflow/scripts"),
        ]
    );
    assert_eq!(
        names("skill://git-workflow/docs"),
        [file("skill://git-workflow/docs/a%20b.md", "text/markdown")]
    );
    assert_eq!(
        names("skill://pdf-processing"),
        [
            file("skill://pdf-processing/SKILL.md", "text/markdown"),
            dir("skill://pdf-processing/forms"),
            dir("skill://pdf-processing/templates"),
        ]
    );
    assert_eq!(names("skill://acme"), [dir("skill://acme/billing")]);
    assert_eq!(
        names("skill://acme/billing"),
        [dir("skill://acme/billing/refunds")]
    );
    assert_eq!(
        names("skill://reports/daily"),
        [file("skill://reports/daily/SKILL.md", "text/markdown")]
    );

    let root = set
        .read_directory("skill://acme/billing/refunds", None, None)
        .unwrap_or_default();
    assert_eq!(
        root["resources"][0],
        json!({"uri": "skill://acme/billing/refunds/SKILL.md", "name": "refunds",
            "description": "The refunds skill", "mimeType": "text/markdown", "size": 63})
    );
    assert_eq!(
        root["resources"][1],
        json!({"uri": "skill://acme/billing/refunds/examples",
        "name": "examples", "mimeType": "inode/directory"})
    );
    let dir_of_files = set
        .read_directory("skill://git-workflow/scripts", None, None)
        .unwrap_or_default();
    assert_eq!(dir_of_files["resources"][0]["name"], "run.sh");
    assert_eq!(dir_of_files["resources"][0]["size"], 18);

    let first = set
        .read_directory("skill://git-workflow", None, Some(3))
        .unwrap_or_default();
    assert_eq!(first["resources"].as_array().map(Vec::len), Some(3));
    let next = first["nextCursor"].as_str().unwrap_or_default();
    let second = set
        .read_directory("skill://git-workflow", Some(next), Some(3))
        .unwrap_or_default();
    assert_eq!(second["resources"].as_array().map(Vec::len), Some(1));
    assert!(second.get("nextCursor").is_none());

    for uri in [
        "skill://git-workflow/SKILL.md",
        "skill://git-workflow/scripts/run.sh",
        "skill://git-workflow/nope",
        "skill://git-workflow/",
        "skill://reports/daily/data",
        "skill://nope",
        "skill://",
        "skill://git-workflow/scripts/..",
        "file:///etc",
    ] {
        assert!(invalid(set.read_directory(uri, None, None)), "{uri}");
    }
}

#[test]
fn dynamic_skills_read_through_their_reader() {
    let (_tree, set) = fixture();
    let md = read_ok(&set, "skill://reports/daily/SKILL.md");
    assert!(matches!(md, ResourceContents::Text(ref t) if t.text.contains("name: daily")));
    let data = read_ok(&set, "skill://reports/daily/data/today.json");
    assert_eq!(data.mime_type(), Some("application/json"));
    assert!(matches!(data, ResourceContents::Text(t) if t.text == "{\"n\":1}"));
    assert!(
        matches!(set.read("skill://reports/daily/other.json"), Some(Err(e)) if e.kind() == ErrorKind::ResourceNotFound)
    );
    assert!(
        matches!(set.read("skill://reports/daily/../x"), Some(Err(e)) if e.kind() == ErrorKind::InvalidParams)
    );
    assert!(set.read("skill://reports/weekly/SKILL.md").is_none());
}

#[test]
fn resources_are_the_skill_md_of_every_skill() {
    let (_tree, set) = fixture();
    let resources = set.resources();
    assert_eq!(resources.len(), 6);
    let git = resources
        .iter()
        .find(|r| r.uri == "skill://git-workflow/SKILL.md");
    assert_eq!(
        git.map(|r| (
            r.name.as_str(),
            r.description.as_deref(),
            r.mime_type.as_deref()
        )),
        Some((
            "git-workflow",
            Some("The git-workflow skill"),
            Some("text/markdown")
        ))
    );
}

#[test]
fn programmatic_skills_are_checked_like_loaded_ones() {
    let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    let build = |def: SkillDef| {
        SkillSet::builder()
            .skill(def)
            .build()
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert!(build(SkillDef::new("a/b", md("b")).file("c/d.txt", "x")).is_ok());
    let refused = [
        (SkillDef::new("a/b", md("c")), "frontmatter name"),
        (SkillDef::new("Bad", md("Bad")), "lowercase"),
        (SkillDef::new("../b", md("b")), "invalid path"),
        (SkillDef::new("/b", md("b")), "invalid path"),
        (SkillDef::new("b", "no frontmatter"), "does not begin"),
        (
            SkillDef::new("b", md("b")).file("../x", "x"),
            "invalid path",
        ),
        (
            SkillDef::new("b", md("b")).file("/etc/passwd", "x"),
            "absolute",
        ),
        (
            SkillDef::new("b", md("b")).file("a\\b", "x"),
            "invalid path",
        ),
        (
            SkillDef::new("b", md("b")).file("SKILL.md", "x"),
            "given twice",
        ),
        (
            SkillDef::new("b", md("b")).file("x", "1").file("x/y", "2"),
            "both a file and a directory",
        ),
        (
            SkillDef::new("b", md("b")).file("big", vec![0u8; 16 * 1024 * 1024]),
            "past the limits",
        ),
    ];
    for (def, reason) in refused {
        let err = build(def).err().unwrap_or_default();
        assert!(err.contains(reason), "{reason}: {err}");
    }
    let many = (0..512).fold(SkillDef::new("b", md("b")), |def, i| {
        def.file(format!("{i}"), "x")
    });
    assert!(build(many).err().unwrap_or_default().contains("513 files"));

    // Same skill path twice, from a directory and from code.
    let tree = TempTree::new("dup");
    tree.skill("b");
    let dup = SkillSet::builder()
        .dir(&tree.0)
        .skill(SkillDef::new("b", md("b")))
        .build();
    assert!(
        matches!(dup, Err(SkillError::Duplicate { ref path }) if path == "b"),
        "{dup:?}"
    );
    // A nested skill must match what the enclosing skill holds in its directory.
    let outer = SkillDef::new("a", md("a")).file("b/SKILL.md", md("b"));
    let nested = SkillSet::builder()
        .skill(outer.clone())
        .skill(SkillDef::new("a/b", md("b")))
        .build();
    assert!(nested.is_ok(), "{nested:?}");
    let differs = SkillSet::builder()
        .skill(outer.clone())
        .skill(SkillDef::new("a/b", md("b")).file("x", "y"))
        .build();
    assert!(
        matches!(differs, Err(SkillError::Conflict { .. })),
        "{differs:?}"
    );
    let dynamic = SkillSet::builder()
        .skill(outer)
        .skill(SkillDef::dynamic("a/b", md("b"), Arc::new(|_: &str| None)))
        .build();
    assert!(
        matches!(dynamic, Err(SkillError::Conflict { .. })),
        "{dynamic:?}"
    );
}
