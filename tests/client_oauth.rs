//! The OAuth client's authorization code flow against a small in-test authorization server and
//! protected MCP server ([`common::oauth_mock`]): challenge parsing, the discovery order, the
//! issuer and resource checks, RFC 9207 `iss` checks, scope selection and step-up, PKCE, the
//! choice of registration, token endpoint authentication and refresh, the command-line client's
//! flags, and the user's time not counting against request timeouts. The extensions' grants
//! and DPoP are in `client_oauth_grants.rs`. The mock records every request, so each test
//! checks the wire; every wait is bounded.
#![cfg(all(feature = "http", feature = "client-http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use actix_mcp::client::auth::{
    AuthError, Authorizer, BearerChallenge, Challenge, ClientRegistration, HeadlessAuthorizer,
    OAuth, OAuthBuilder, TokenEndpointAuth, authorization_server_metadata_urls, authorize_with,
    protected_resource_metadata_urls,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientBuilder, ClientError, Lifecycle};
use base64::Engine as _;
use serde_json::{Value, json};

use common::oauth_mock::*;
use common::{WAIT, within_for};

// ---------------------------------------------------------------------------------------------
// Pieces

#[test]
fn challenges_are_parsed_from_every_header_value() {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.append(
        reqwest::header::WWW_AUTHENTICATE,
        "Basic realm=\"x\", Negotiate abc==".parse().unwrap(),
    );
    headers.append(
        reqwest::header::WWW_AUTHENTICATE,
        r#"Bearer error="insufficient_scope", scope="files:read  files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="needs \"write\", sorry""#
            .parse()
            .unwrap(),
    );
    let bearer = BearerChallenge::from_headers(&headers).unwrap();
    assert!(bearer.is_insufficient_scope());
    assert_eq!(
        bearer.scope,
        Some(vec!["files:read".to_owned(), "files:write".to_owned()])
    );
    assert_eq!(
        bearer.resource_metadata.as_deref(),
        Some("https://mcp.example.com/.well-known/oauth-protected-resource")
    );
    assert_eq!(
        bearer.error_description.as_deref(),
        Some(r#"needs "write", sorry"#)
    );
    let all = Challenge::parse_all("Basic realm=\"x\", Negotiate abc==");
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].token68(), Some("abc=="));
    assert!(BearerChallenge::from_headers(&reqwest::header::HeaderMap::new()).is_none());
}

#[test]
fn discovery_urls_follow_the_spec_order() {
    let server = "https://mcp.example.com/a/mcp".parse().unwrap();
    let prm: Vec<String> = protected_resource_metadata_urls(&server)
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        prm,
        [
            "https://mcp.example.com/.well-known/oauth-protected-resource/a/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
        ]
    );
    let issuer = "https://as.example.com/tenant1/".parse().unwrap();
    let metadata: Vec<String> = authorization_server_metadata_urls(&issuer)
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        metadata,
        [
            "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
            "https://as.example.com/.well-known/openid-configuration/tenant1",
            "https://as.example.com/tenant1/.well-known/openid-configuration",
        ]
    );
}

#[test]
fn settings_are_checked_when_built() {
    let bad_redirect =
        OAuth::authorization_code("http://example.com/cb", HeadlessAuthorizer::new())
            .build()
            .err();
    assert!(matches!(
        bad_redirect,
        Some(ClientError::Auth(AuthError::Config(_)))
    ));
    let bad_document = oauth()
        .client_metadata_url("http://app.example.com/client.json")
        .build()
        .err();
    assert!(matches!(
        bad_document,
        Some(ClientError::Auth(AuthError::Config(_)))
    ));
}

// ---------------------------------------------------------------------------------------------
// The flow

#[actix_web::test]
async fn a_401_runs_discovery_registration_and_pkce_then_the_request_is_resent() {
    let mock = start(Config::default());
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let requests = mock.requests();
    let expected = [
        "POST /mcp",
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "GET /authorize",
        "POST /token",
        "POST /mcp",
    ];
    assert_eq!(&requests[..expected.len()], expected, "{requests:#?}");
    // One authorization for the whole connection.
    assert_eq!(mock.authorizations().len(), 1);
    let authorization = &mock.authorizations()[0];
    assert_eq!(authorization["code_challenge_method"], "S256");
    assert_eq!(authorization["resource"], mock.url());
    assert_eq!(authorization["redirect_uri"], REDIRECT);
    assert_eq!(authorization["client_id"], "dyn-1");
    assert_eq!(
        scope_of(authorization),
        None,
        "no scope anywhere: none sent"
    );
    assert_eq!(mock.state.seen.lock().unwrap().pkce_failures, 0);
    let token = &mock.token_requests()[0];
    assert_eq!(token["resource"], mock.url());
    assert_eq!(token["redirect_uri"], REDIRECT);
    assert_eq!(token["client_id"], "dyn-1");
    assert!(!token.contains_key("authorization"), "auth method none");
    let registration = &mock.registrations()[0];
    assert_eq!(registration["application_type"], "native");
    assert_eq!(registration["redirect_uris"], json!([REDIRECT]));
    assert_eq!(registration["token_endpoint_auth_method"], "none");
    assert_eq!(
        registration["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    mock.stop().await;
}

#[actix_web::test]
async fn without_a_header_link_the_path_aware_then_the_root_metadata_is_tried() {
    let mock = start(Config {
        prm_path: Some("/.well-known/oauth-protected-resource"),
        prm_in_header: false,
        // A root PRM may name the origin as the resource.
        prm_resource: Resource::Origin,
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let requests = mock.requests();
    assert_eq!(requests[1], "GET /.well-known/oauth-protected-resource/mcp");
    assert_eq!(requests[2], "GET /.well-known/oauth-protected-resource");
    assert_eq!(
        mock.authorizations()[0]["resource"],
        mock.base,
        "exactly as published"
    );
    mock.stop().await;
}

#[actix_web::test]
async fn authorization_server_metadata_is_looked_for_in_the_spec_order() {
    let mock = start(Config {
        as_prefix: "/tenant1",
        as_metadata_path: "/tenant1/.well-known/openid-configuration",
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let requests = mock.requests();
    let expected = [
        "GET /.well-known/oauth-authorization-server/tenant1",
        "GET /.well-known/openid-configuration/tenant1",
        "GET /tenant1/.well-known/openid-configuration",
        "POST /tenant1/register",
    ];
    assert_eq!(&requests[2..6], expected, "{requests:#?}");
    mock.stop().await;
}

#[actix_web::test]
async fn metadata_naming_another_issuer_is_not_used() {
    let mock = start(Config {
        issuer_override: Some("https://attacker.example.com".into()),
        ..Config::default()
    });
    let error = auth_error(run(&mock, oauth().build().unwrap()).await);
    assert!(
        matches!(error, AuthError::IssuerMismatch { ref found, .. } if found == "https://attacker.example.com")
    );
    assert!(!mock.saw("POST /register") && !mock.saw("GET /authorize") && !mock.saw("POST /token"));
    mock.stop().await;
}

#[actix_web::test]
async fn metadata_for_another_resource_is_refused() {
    let mock = start(Config {
        prm_resource: Resource::Other("https://evil.example.com/mcp"),
        ..Config::default()
    });
    let error = auth_error(run(&mock, oauth().build().unwrap()).await);
    assert!(
        matches!(error, AuthError::ResourceMismatch { .. }),
        "{error:?}"
    );
    assert!(!mock.saw("GET /.well-known/oauth-authorization-server"));
    mock.stop().await;
}

#[actix_web::test]
async fn an_authorization_server_without_pkce_is_refused() {
    let mock = start(Config {
        pkce: false,
        ..Config::default()
    });
    let error = auth_error(run(&mock, oauth().build().unwrap()).await);
    assert!(
        matches!(error, AuthError::PkceUnsupported { .. }),
        "{error:?}"
    );
    assert!(!mock.saw("GET /authorize"));
    mock.stop().await;
}

#[actix_web::test]
async fn iss_is_compared_as_a_string_before_the_code_is_sent() {
    for (iss, advertised, expect_ok) in [
        (Iss::Correct, true, true),
        (Iss::Missing, false, true),
        (Iss::Missing, true, false),
        (Iss::Wrong, false, false),
        (Iss::Wrong, true, false),
        (Iss::TrailingSlash, true, false),
    ] {
        let mock = start(Config {
            iss,
            iss_advertised: advertised,
            ..Config::default()
        });
        let result = run(&mock, oauth().build().unwrap()).await;
        if expect_ok {
            result.unwrap_or_else(|e| panic!("{iss:?}/{advertised}: {e}"));
        } else {
            let error = auth_error(result);
            assert!(
                matches!(
                    (iss, &error),
                    (Iss::Missing, AuthError::IssMissing { .. })
                        | (
                            Iss::Wrong | Iss::TrailingSlash,
                            AuthError::IssMismatch { .. }
                        )
                ),
                "{iss:?}/{advertised}: {error:?}"
            );
            assert!(mock.token_requests().is_empty(), "the code went nowhere");
        }
        mock.stop().await;
    }
}

#[actix_web::test]
async fn scopes_come_from_the_challenge_then_the_resource_metadata() {
    // The challenge's scope wins over scopes_supported.
    let mock = start(Config {
        challenge_scope: Some("mcp:basic"),
        prm_scopes: Some(vec!["mcp:a", "mcp:b"]),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    assert_eq!(scope_of(&mock.authorizations()[0]), Some("mcp:basic"));
    mock.stop().await;
    // Without one: every scope the resource supports.
    let mock = start(Config {
        prm_scopes: Some(vec!["mcp:a", "mcp:b"]),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    assert_eq!(scope_of(&mock.authorizations()[0]), Some("mcp:a mcp:b"));
    mock.stop().await;
}

#[actix_web::test]
async fn offline_access_is_asked_for_only_where_the_server_lists_it() {
    let mock = start(Config {
        prm_scopes: Some(vec!["mcp:basic"]),
        as_scopes: Some(vec!["mcp:basic", "offline_access"]),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    assert_eq!(
        scope_of(&mock.authorizations()[0]),
        Some("mcp:basic offline_access")
    );
    mock.stop().await;
    let mock = start(Config {
        challenge_scope: Some("mcp:basic offline_access"),
        as_scopes: Some(vec!["mcp:basic"]),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    assert_eq!(scope_of(&mock.authorizations()[0]), Some("mcp:basic"));
    mock.stop().await;
}

#[actix_web::test]
async fn a_403_insufficient_scope_steps_up_with_the_union_of_scopes() {
    let mock = start(Config {
        challenge_scope: Some("mcp:basic"),
        call_scope: Some("mcp:write"),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let authorizations = mock.authorizations();
    assert_eq!(authorizations.len(), 2);
    assert_eq!(scope_of(&authorizations[0]), Some("mcp:basic"));
    assert_eq!(scope_of(&authorizations[1]), Some("mcp:basic mcp:write"));
    // The registration is reused for the step-up.
    assert_eq!(mock.registrations().len(), 1);
    mock.stop().await;
}

/// SEP-2350: the step-up asks for every scope the client holds, the ones the authorization
/// server granted without being asked included, with the challenge's (which names only what
/// the call needs).
#[actix_web::test]
async fn a_step_up_keeps_the_scopes_granted_beyond_those_asked_for() {
    let mock = start(Config {
        default_scope: Some("mcp:basic"),
        call_scope: Some("mcp:write"),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let authorizations = mock.authorizations();
    assert_eq!(authorizations.len(), 2);
    // Nothing to ask for at first: the server's defaults are granted.
    assert_eq!(scope_of(&authorizations[0]), None);
    // The challenge names mcp:write only; the granted mcp:basic is kept.
    assert_eq!(scope_of(&authorizations[1]), Some("mcp:basic mcp:write"));
    mock.stop().await;
}

#[actix_web::test]
async fn step_up_gives_up_after_the_retry_limit() {
    let mock = start(Config {
        call_scope: Some("mcp:admin"),
        grant_nothing: true,
        ..Config::default()
    });
    let error = auth_error(run(&mock, oauth().max_step_up(2).build().unwrap()).await);
    assert_eq!(
        error,
        AuthError::InsufficientScope {
            scope: "mcp:admin".into(),
            attempts: 2,
        }
    );
    // The 401's authorization, then two step-ups.
    let authorizations = mock.authorizations();
    assert_eq!(authorizations.len(), 3);
    assert_eq!(scope_of(&authorizations[2]), Some("mcp:admin"));
    mock.stop().await;
}

#[actix_web::test]
async fn the_client_metadata_document_is_preferred_to_registration() {
    let mock = start(Config {
        cimd: true,
        ..Config::default()
    });
    let url = "https://app.example.com/oauth/client.json";
    run(&mock, oauth().client_metadata_url(url).build().unwrap())
        .await
        .unwrap();
    assert!(mock.registrations().is_empty());
    assert_eq!(mock.authorizations()[0]["client_id"], url);
    assert_eq!(mock.token_requests()[0]["client_id"], url);
    mock.stop().await;
    // Not advertised: dynamic registration.
    let mock = start(Config::default());
    run(&mock, oauth().client_metadata_url(url).build().unwrap())
        .await
        .unwrap();
    assert_eq!(mock.registrations().len(), 1);
    mock.stop().await;
}

#[actix_web::test]
async fn pre_registered_credentials_win_and_authenticate_with_basic() {
    let mock = start(Config {
        cimd: true,
        auth_methods: Some(vec!["client_secret_basic"]),
        ..Config::default()
    });
    let registration = ClientRegistration::pre_registered("pre client")
        .secret("s3cret:x")
        .issuer(mock.base.clone());
    run(
        &mock,
        oauth()
            .client_metadata_url("https://app.example.com/client.json")
            .client_registration(registration)
            .build()
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(mock.registrations().is_empty());
    let token = &mock.token_requests()[0];
    let basic = token["authorization"].strip_prefix("Basic ").unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic)
        .unwrap();
    // RFC 6749 section 2.3.1: both parts form-encoded.
    assert_eq!(
        std::str::from_utf8(&decoded).unwrap(),
        "pre+client:s3cret%3Ax"
    );
    assert!(!token.contains_key("client_secret"));
    mock.stop().await;
}

#[actix_web::test]
async fn credentials_bound_to_another_issuer_are_not_sent() {
    let mock = start(Config::default());
    let registration = ClientRegistration::pre_registered("elsewhere")
        .secret("s")
        .issuer("https://other-as.example.com");
    run(
        &mock,
        oauth().client_registration(registration).build().unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(mock.registrations().len(), 1, "registered instead");
    assert!(
        mock.authorizations()
            .iter()
            .all(|a| a["client_id"] != "elsewhere")
    );
    mock.stop().await;
}

#[actix_web::test]
async fn the_token_endpoint_method_follows_the_server_list() {
    let mock = start(Config {
        auth_methods: Some(vec!["client_secret_post"]),
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    assert_eq!(
        mock.registrations()[0]["token_endpoint_auth_method"],
        "client_secret_post"
    );
    let token = &mock.token_requests()[0];
    assert_eq!(token["client_secret"], "dyn-secret");
    assert!(!token.contains_key("authorization"));
    mock.stop().await;
    assert_eq!(
        TokenEndpointAuth::from_name("client_secret_basic"),
        Some(TokenEndpointAuth::ClientSecretBasic)
    );
}

#[actix_web::test]
async fn an_expired_token_is_refreshed_before_use() {
    let mock = start(Config {
        short_lived: true,
        ..Config::default()
    });
    run(&mock, oauth().build().unwrap()).await.unwrap();
    let grants: Vec<String> = mock
        .token_requests()
        .iter()
        .map(|t| t["grant_type"].clone())
        .collect();
    assert_eq!(grants[0], "authorization_code");
    assert!(
        grants[1..].iter().all(|g| g == "refresh_token"),
        "{grants:?}"
    );
    assert!(grants.len() >= 2);
    assert_eq!(mock.authorizations().len(), 1, "no second authorization");
    mock.stop().await;
}

#[actix_web::test]
async fn a_metadata_link_to_a_plain_http_host_is_not_fetched() {
    let mock = start(Config {
        prm_link: Some("http://metadata.example.invalid/prm"),
        ..Config::default()
    });
    let error = auth_error(run(&mock, oauth().build().unwrap()).await);
    assert!(
        matches!(error, AuthError::InsecureUrl { ref url, .. } if url.contains("example.invalid"))
    );
    assert_eq!(mock.requests(), ["POST /mcp"], "nothing fetched");
    mock.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The command-line client

#[actix_web::test]
async fn the_cli_authorizes_with_the_flags_it_is_given() {
    let mock = start(Config {
        auth_methods: Some(vec!["client_secret_post"]),
        ..Config::default()
    });
    let mut command = tokio::process::Command::new(common::pipe::example_binary("client"));
    command
        .args(["--url", &mock.url(), "--oauth"])
        .args([
            "--oauth-client-id",
            "cli-client",
            "--oauth-client-secret",
            "cli-secret",
        ])
        .args(["--oauth-issuer", &mock.base, "--oauth-scope", "mcp:a mcp:b"])
        .args(["--oauth-redirect-uri", REDIRECT, "tools"])
        .kill_on_drop(true);
    // A process of its own, and a whole authorization.
    let output = within_for(WAIT * 4, command.output()).await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tools: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(tools[0]["name"], "t");
    assert!(mock.registrations().is_empty());
    let authorization = &mock.authorizations()[0];
    assert_eq!(authorization["client_id"], "cli-client");
    assert_eq!(scope_of(authorization), Some("mcp:a mcp:b"));
    assert_eq!(mock.token_requests()[0]["client_secret"], "cli-secret");
    mock.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The user's time

/// A headless authorizer that first waits `delay`, like a user at a browser.
fn slow_user(delay: Duration) -> OAuthBuilder {
    let authorizer = authorize_with(move |request| {
        let headless = HeadlessAuthorizer::new();
        async move {
            tokio::time::sleep(delay).await;
            headless.authorize(request).await
        }
    });
    OAuth::authorization_code(REDIRECT, authorizer).client_name("oauth-test")
}

async fn connect_with(
    mock: &Mock,
    builder: ClientBuilder,
    oauth: OAuth,
) -> Result<(), ClientError> {
    let options = HttpOptions::default().get_stream(false).auth(oauth);
    let work = async {
        let client = builder
            .connect(HttpTransport::with_options(mock.url(), options))
            .await?;
        client.tools().await?;
        client.close().await;
        Ok(())
    };
    // A whole connection with its authorization, and the user's time.
    within_for(WAIT * 2, work).await
}

#[actix_web::test]
async fn a_user_slower_than_the_request_timeout_does_not_fail_the_request() {
    for lifecycle in [Lifecycle::V2025, Lifecycle::Auto] {
        let mock = start(Config::default());
        let builder = Client::builder("oauth-test", "1.0.0")
            .lifecycle(lifecycle)
            .discover_timeout(Duration::from_millis(400))
            .request_timeout(Some(Duration::from_millis(400)));
        let oauth = slow_user(Duration::from_millis(1200)).build().unwrap();
        let outcome = connect_with(&mock, builder, oauth).await;
        assert!(outcome.is_ok(), "{lifecycle:?}: {outcome:?}");
        assert_eq!(mock.authorizations().len(), 1);
        mock.stop().await;
    }
}

#[actix_web::test]
async fn the_authorization_timeout_bounds_the_user() {
    let mock = start(Config::default());
    let oauth = slow_user(Duration::from_secs(30))
        .authorization_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let builder = Client::builder("oauth-test", "1.0.0").lifecycle(Lifecycle::V2025);
    let error = match connect_with(&mock, builder, oauth).await {
        Err(ClientError::Auth(error)) => error,
        other => panic!("expected an authorization error, got {other:?}"),
    };
    assert!(matches!(error, AuthError::Authorizer(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(mock.token_requests().is_empty());
    mock.stop().await;
}
