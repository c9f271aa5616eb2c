//! `examples/auth.rs`.

use super::run;

#[tokio::test]
async fn auth_example_refuses_without_a_token_and_names_the_caller_with_one() {
    let out = run("auth", &[]).await;
    assert!(
        out.contains(
            "without a token: 401 Unauthorized Bearer resource_metadata=\"http://127.0.0.1:"
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
}
