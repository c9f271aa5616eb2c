//! Authorization end to end: our OAuth client against our bearer-protected server, with a small
//! authorization server in the test process ([`common::authz`]: metadata, JWKS, dynamic
//! registration, an authorization endpoint that approves at once, and a token endpoint).
//!
//! One run walks every step a real deployment takes: the first request is refused (401), the
//! client discovers the protected resource metadata and the authorization server, registers,
//! obtains a token with PKCE and the resource indicator, and the handler sees the caller; a
//! tool that needs more scope is refused (403) and the client steps up; a token that expires
//! early is refused and refreshed. Both protocol eras, every wait bounded, loopback only.
#![cfg(all(feature = "http", feature = "client-http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_mcp::client::auth::{HeadlessAuthorizer, OAuth};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, Lifecycle};
use actix_mcp::server::auth::{BearerAuth, JwtValidator};
use actix_mcp::{RequestContext, Server, ToolDef};
use actix_web::dev::ServerHandle;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use common::authz::{AuthConfig, AuthServer};
use common::{WAIT, within_for};

/// Our protected server on `127.0.0.1:0`: `whoami` needs `mcp:read` (every request does),
/// `notes` needs `notes:read` too, `admin` needs `mcp:write` too.
fn protected_server(authz: &AuthServer) -> (String, ServerHandle) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let server = Server::builder("protected", "1.0.0")
        .required_scopes(["mcp:read"])
        .tool(
            ToolDef::new("whoami", |cx: RequestContext| async move {
                let identity = cx.identity().expect("an identity on a protected endpoint");
                format!(
                    "{} {}",
                    identity.subject().unwrap_or("?"),
                    identity.scopes().join(",")
                )
            })
            .description("Says who calls"),
        )
        .tool(
            ToolDef::new("notes", |_cx: RequestContext| async { "noted" })
                .description("Needs notes:read")
                .required_scopes(["notes:read"]),
        )
        .tool(
            ToolDef::new("admin", |_cx: RequestContext| async { "done" })
                .description("Needs mcp:write")
                .required_scopes(["mcp:write"]),
        )
        .build()
        .unwrap();
    let validator = JwtValidator::builder(authz.jwks_url())
        .issuer(&authz.issuer)
        .audience(&resource)
        .allow_http(true)
        .leeway(Duration::ZERO)
        .build()
        .unwrap();
    let auth = BearerAuth::builder(resource.clone(), validator)
        .authorization_server(&authz.issuer)
        .scopes_supported(["mcp:read", "notes:read", "mcp:write"])
        .build()
        .unwrap();
    let mcp = server.http("/mcp").bearer_auth(auth).build().unwrap();
    let http = actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .workers(1)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(listener)
        .unwrap()
        .run();
    let handle = http.handle();
    actix_rt::spawn(http);
    (resource, handle)
}

/// Waits until the access token `oauth` holds is expired for the server, by the wall clock
/// the server checks it with: `exp` is in whole seconds and still valid at its own second, so
/// until the next one begins.
async fn until_expired(oauth: &OAuth) {
    let token = oauth.token().expect("a token");
    let payload = token.access_token().split('.').nth(1).expect("a JWT");
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let expired = UNIX_EPOCH + Duration::from_secs(claims["exp"].as_u64().unwrap() + 1);
    let left = expired
        .duration_since(SystemTime::now())
        .unwrap_or_default();
    // A little past it: the timer and the wall clock are two clocks.
    tokio::time::sleep(left + Duration::from_millis(20)).await;
}

async fn walk_every_step(lifecycle: Lifecycle) {
    // Tokens say they last an hour but expire after two seconds: the server refuses one
    // before the client expects it, which only a refresh after the 401 recovers from.
    let authz = AuthServer::start(AuthConfig {
        token_ttl: Duration::from_secs(2),
        announced_ttl: Some(Duration::from_secs(3600)),
        ..AuthConfig::default()
    });
    let (resource, server) = protected_server(&authz);
    let oauth = OAuth::authorization_code("http://127.0.0.1:9/callback", HeadlessAuthorizer::new())
        .client_name("e2e")
        .build()
        .unwrap();
    let options = HttpOptions::default().get_stream(false).auth(oauth.clone());
    let work = async {
        let client = Client::builder("e2e", "1.0.0")
            .lifecycle(lifecycle)
            .connect(HttpTransport::with_options(&resource, options))
            .await
            .unwrap();

        // Discovery, registration, the authorization code with PKCE, the token.
        let answer = client.call_tool("whoami", json!({})).await.unwrap();
        // `offline_access` is asked for because the authorization server offers it.
        assert_eq!(
            answer.text_content(),
            "user-1 mcp:read,offline_access",
            "{answer:?}"
        );
        let counts = authz.counts();
        assert_eq!(counts.registrations, 1, "{counts:?}");
        assert_eq!(counts.authorizations, 1, "{counts:?}");
        assert_eq!(counts.code_exchanges, 1, "{counts:?}");
        let first = authz.last_authorization().unwrap();
        assert_eq!(first.resource.as_deref(), Some(resource.as_str()));
        assert_eq!(
            first.scope.as_deref(),
            Some("mcp:read offline_access"),
            "the challenge's scope"
        );

        // Step-up: notes needs notes:read; the challenge names mcp:read and notes:read.
        let answer = client.call_tool("notes", json!({})).await.unwrap();
        assert_eq!(answer.text_content(), "noted");
        assert_eq!(authz.counts().authorizations, 2);
        let asked = authz.last_authorization().unwrap().scope;
        assert_eq!(asked.as_deref(), Some("mcp:read notes:read offline_access"));
        // Step-up again: admin's challenge names mcp:read and mcp:write only; the client asks
        // for the union with what it holds (SEP-2350), keeping notes:read, and gets through.
        let answer = client.call_tool("admin", json!({})).await.unwrap();
        assert_eq!(answer.text_content(), "done");
        assert_eq!(authz.counts().authorizations, 3);
        let asked = authz.last_authorization().unwrap().scope;
        assert_eq!(
            asked.as_deref(),
            Some("mcp:read notes:read mcp:write offline_access")
        );
        // Notes still works with the new token: no further authorization.
        let answer = client.call_tool("notes", json!({})).await.unwrap();
        assert_eq!(answer.text_content(), "noted");
        assert_eq!(authz.counts().authorizations, 3);
        assert_eq!(authz.counts().registrations, 1, "registered once");

        // Expiry: the token is refused once it expired; the refresh token recovers.
        until_expired(&oauth).await;
        let answer = client.call_tool("whoami", json!({})).await.unwrap();
        let mut granted: Vec<_> = answer
            .text_content()
            .split(' ')
            .map(str::to_owned)
            .collect();
        assert_eq!(granted.remove(0), "user-1");
        let mut granted: Vec<_> = granted[0].split(',').map(str::to_owned).collect();
        granted.sort();
        assert_eq!(
            granted,
            ["mcp:read", "mcp:write", "notes:read", "offline_access"]
        );
        let counts = authz.counts();
        assert_eq!(counts.refreshes, 1, "{counts:?}");
        assert_eq!(counts.authorizations, 3, "no new authorization: {counts:?}");
        client.close().await;
    };
    // The whole flow: a dozen round trips, two authorizations, and the wait for the token to
    // expire.
    within_for(WAIT * 4, work).await;
    assert!(oauth.token().is_some());
    server.stop(true).await;
    authz.stop().await;
}

#[actix_web::test]
async fn the_client_authorizes_steps_up_and_refreshes_against_a_protected_server_2025() {
    walk_every_step(Lifecycle::V2025).await;
}

#[actix_web::test]
async fn the_client_authorizes_steps_up_and_refreshes_against_a_protected_server_2026() {
    walk_every_step(Lifecycle::V2026).await;
}

/// The examples: `http_server --auth-jwks ... --auth-issuer ... --auth-audience ...` protects its
/// endpoint, and `client --oauth` (headless, dynamic registration) reaches it.
#[actix_web::test]
async fn the_example_client_reaches_the_example_server_protected_by_bearer_auth() {
    let authz = AuthServer::start(AuthConfig::default());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let _server = tokio::process::Command::new(common::pipe::example_binary("http_server"))
        .args(["--port", &port.to_string(), "--workers", "1"])
        .args([
            "--auth-jwks",
            &authz.jwks_url(),
            "--auth-issuer",
            &authz.issuer,
        ])
        .args(["--auth-audience", &url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    common::pipe::listening(port).await;

    let client = |oauth: bool| {
        let mut command = tokio::process::Command::new(common::pipe::example_binary("client"));
        command.args(["--url", &url]);
        if oauth {
            command.arg("--oauth");
        }
        command
            .args(["call", "whoami", "{}"])
            .kill_on_drop(true)
            .output()
    };
    // Without --oauth the endpoint refuses.
    // Each run of the client is a process of its own, and the second a whole authorization.
    let refused = within_for(WAIT * 4, client(false)).await.unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("unauthorized"),
        "{refused:?}"
    );
    // With it, the whole flow runs and the tool sees the token's subject.
    let reached = within_for(WAIT * 4, client(true)).await.unwrap();
    assert_eq!(reached.status.code(), Some(0), "{reached:?}");
    let stdout = String::from_utf8_lossy(&reached.stdout);
    assert!(stdout.contains("user-1"), "{stdout}");
    assert_eq!(authz.counts().registrations, 1);
    authz.stop().await;
}
