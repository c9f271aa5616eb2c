//! `examples/auth.rs`.

use super::run;

#[tokio::test]
async fn auth_example_refuses_without_a_token_names_the_caller_and_challenges_once() {
    let out = run("auth", &[]).await;
    assert!(
        out.contains(
            "without a token: 401 Unauthorized Bearer scope=\"mcp\", resource_metadata=\"http://127.0.0.1:"
        ),
        "{out}"
    );
    assert!(
        out.contains("/.well-known/oauth-protected-resource/mcp\""),
        "{out}"
    );
    assert!(
        out.contains("with the token: whoami = alice (scopes: mcp)"),
        "{out}"
    );
    // One challenge, every scope the call needs (the server's and the tool's).
    assert!(
        out.contains("audit without its scope: 403 Forbidden Bearer error=\"insufficient_scope\""),
        "{out}"
    );
    assert!(out.contains("scope=\"mcp audit:read\""), "{out}");
}
