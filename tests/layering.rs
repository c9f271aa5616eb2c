//! What may import what: the layers of the crate (see the README's Layout section), checked
//! on the source. A doc link may name any module; code may not.
#![cfg(feature = "http")]

use std::fs;
use std::path::{Path, PathBuf};

/// `(layer, paths code in it must not name, why)`.
const NEVER: &[(&str, &[&str], &str)] = &[
    (
        "src/protocol",
        &[
            "crate::server",
            "crate::client",
            "crate::transport",
            "crate::cluster",
            "crate::telemetry",
            "crate::error",
        ],
        "the protocol model is a leaf: it takes its error object from the runtime",
    ),
    (
        "src/server",
        &["crate::client", "crate::transport", "crate::cluster"],
        "transports and the cluster sit above the server; it reaches them through the runtime's traits",
    ),
    (
        "src/telemetry",
        &["crate::server", "crate::client", "crate::transport"],
        "telemetry takes plain values",
    ),
    (
        "src/client",
        &["crate::server", "crate::cluster"],
        "the client never imports the server",
    ),
    (
        "src/transport",
        &["crate::client"],
        "the server's transports never import the client",
    ),
    (
        "actors/src",
        &["actix_mcp::"],
        "the runtime speaks JSON-RPC only",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` (1-based) whose code names one of `forbidden`, with the path named.
fn violations<'a>(text: &str, forbidden: &[&'a str]) -> Vec<(usize, &'a str)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for path in forbidden {
            if line.contains(path) {
                found.push((n + 1, *path));
            }
        }
    }
    found
}

#[test]
fn no_layer_imports_what_it_must_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for (layer, forbidden, why) in NEVER {
        let mut files = Vec::new();
        rust_files(&root.join(layer), &mut files);
        assert!(!files.is_empty(), "{layer} has no Rust files");
        for file in files {
            let text = fs::read_to_string(&file).expect("a readable source file");
            for (n, path) in violations(&text, forbidden) {
                broken.push(format!(
                    "{}:{n}: names {path} ({why})",
                    file.strip_prefix(root).unwrap_or(&file).display(),
                ));
            }
        }
    }
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_check_sees_a_forbidden_import_and_not_a_doc_link() {
    let text = "//! See [`Server`](crate::server::Server).\n\
                use crate::protocol::Tool;\n\
                use crate::server::ServerInner;\n\
                /// [`McpHttp`](crate::transport::http::McpHttp)\n";
    assert_eq!(
        violations(text, &["crate::server", "crate::transport"]),
        vec![(3, "crate::server")]
    );
}
