//! Regression tests for what the fuzz targets of `tests/fuzz` found: each test replays the
//! finding through the public API and says which target found it, with its input.
#![cfg(feature = "server")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use actix_mcp::UriTemplate;
use actix_mcp::prelude::*;
use serde_json::json;

/// Runs `work` on its own thread and fails unless it finishes within `limit` (a quadratic
/// matcher never gets to hang the test run).
fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished) = mpsc::channel();
    let started = Instant::now();
    thread::spawn(move || {
        let _ = done.send(work());
    });
    finished
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("still running after {:?}", started.elapsed()))
}

/// A 64 KiB uri against a template with one variable before a literal: matching is linear in
/// the uri, not quadratic (found by `uri_template`: `users/{id}/profile` and `users/` then
/// 40,000 × `a` took 11 s; every candidate end percent-decoded the whole value again).
#[test]
fn matching_a_long_uri_against_a_template_takes_linear_time() {
    let uri = format!("users/{}", "a".repeat(64 * 1024));
    let matched = within(Duration::from_secs(2), move || {
        UriTemplate::parse("users/{id}/profile")
            .unwrap()
            .matches(&uri)
    });
    assert_eq!(matched, None);
}

/// Separators a variable may also contain make the backtracking polynomial in the number of
/// variables: 400 dashes against a date template took 20 s (found while reducing a
/// `uri_template` slow unit; every split of the dashes between the three variables is tried).
#[test]
fn matching_a_short_uri_of_separators_takes_little_time() {
    let uri = format!("archive/{}", "-".repeat(400));
    let matched = within(Duration::from_secs(2), move || {
        UriTemplate::parse("archive/{year}-{month}-{day}/index")
            .unwrap()
            .matches(&uri)
    });
    assert_eq!(matched, None);
}

/// A template of many expressions with no literal between them: backtracking tries every way
/// to share the uri between them, exponential in their number (the `uri_template` target
/// timed out on this template matched against its own 60-byte expansion).
#[test]
fn matching_against_many_adjacent_expressions_takes_little_time() {
    let template = "{a}.{b}{cb}{c}{d}{b}{cb}{c}{d}:3J{c}eikgtest::3J{c}eikgtest://doc:{/ction,rt}{+efxt}{#frag}";
    let uri = "x.yyyyyyyyzzzzzzzzwwwwwwwwvvvvvvvvyyyyyyyy:3Jwwwwwwwweikgtest::3Jwwwwwwwweikgtest://doc:/p/q!";
    let matched = within(Duration::from_secs(2), move || {
        UriTemplate::parse(template).unwrap().matches(uri)
    });
    // The split the matcher finds (a repeated variable keeps its last value).
    let matched = matched.expect("the uri splits between the expressions");
    assert_eq!(matched["c"], "wwwwwwww");
    assert_eq!(matched["ction"], "p");
    assert_eq!(matched["rt"], "q");
}

/// The same through a server: one `resources/read` of a long uri must not pin a worker
/// (found by `uri_template`; the request is well under the 4 MiB body limit of Streamable HTTP).
#[actix_rt::test]
async fn a_long_resources_read_uri_is_answered_promptly() {
    let server = Server::builder("templates", "1.0.0")
        .resource_template(ResourceTemplateDef::new(
            "users/{id}/profile",
            "profile",
            |UriVars(vars): UriVars| async move { format!("{vars:?}") },
        ))
        .build()
        .unwrap();
    let request = json!({
        "jsonrpc": "2.0", "id": 1, "method": "resources/read",
        "params": {"uri": format!("users/{}", "a".repeat(64 * 1024))}
    })
    .to_string();
    let started = Instant::now();
    let answer = server.handle_json(&request).await.unwrap();
    let elapsed = started.elapsed();
    assert!(answer.contains("\"error\""), "{answer:.200}");
    assert!(
        elapsed < Duration::from_secs(2),
        "answered after {elapsed:?}"
    );
}
