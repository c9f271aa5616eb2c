//! Bearer-protected servers against abuse, with the harness of [`common::bearer`]: a token that
//! names no principal is refused (it would share one owner with every other such token), and so
//! are a DPoP-bound token sent as a plain bearer token, a JWT typed other than `at+jwt`, and a
//! token without `kid` that none of the first keys of its algorithm verifies; a request without
//! usable credentials is refused before its body is read; introspection is asked once per
//! refused token for a while, and by a few validations at once at most.
#![cfg(all(feature = "http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix_mcp::server::auth::{AuthError, ClientAuth, IntrospectionValidator, TokenValidator};
use reqwest::StatusCode;
use reqwest::header::AUTHORIZATION;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use common::bearer::{
    AuthServer, McpServer, challenge, jwk, jwt_setup, now, read, token, token_typed,
};
use common::http::send;

/// An MCP server trusting `auth_server`'s introspection endpoint.
fn introspection_setup(auth_server: &AuthServer) -> McpServer {
    let endpoint = format!("{}/introspect", auth_server.url);
    let issuer = auth_server.url.clone();
    McpServer::start(
        |audience| {
            IntrospectionValidator::builder(&endpoint, ClientAuth::basic("mcp-server", "s3cret"))
                .issuer(&issuer)
                .audience(audience)
                .build()
                .unwrap()
        },
        &auth_server.url,
    )
}

/// An active introspection answer for `mcp`, with `extra` merged in (a `null` removes a field).
fn active(auth_server: &AuthServer, mcp: &McpServer, extra: Value) -> Value {
    let mut answer = json!({"active": true, "sub": "carol", "client_id": "cli", "scope": "mcp",
                            "iss": auth_server.url, "aud": mcp.url, "exp": now() + 300});
    for (name, value) in extra.as_object().unwrap() {
        if value.is_null() {
            answer.as_object_mut().unwrap().remove(name);
        } else {
            answer[name] = value.clone();
        }
    }
    answer
}

/// `whoami` as a stateless request with `token`: the status, the challenge's `error` and
/// `error_description` (empty when none).
async fn whoami(mcp: &McpServer, token: &str) -> (StatusCode, String, String) {
    let call = json!({"name": "whoami", "arguments": {}});
    let response = send(mcp.v2026(1, "tools/call", call, Some(token))).await;
    let status = response.status();
    if status == StatusCode::UNAUTHORIZED {
        let params = challenge(&response);
        let field = |name: &str| params.get(name).cloned().unwrap_or_default();
        return (status, field("error"), field("error_description"));
    }
    let (_, message) = read(response).await;
    assert!(message.get("result").is_some(), "{message}");
    (status, String::new(), String::new())
}

/// F7: a token naming neither a subject nor a client would be the same owner as every other
/// such token of its issuer (sessions, tasks, request states, per-identity limits): refused.
#[actix_rt::test]
async fn a_token_naming_no_principal_is_refused() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let jwt = |extra: Value| token("ec-a", Some("ec-a"), &iss, &mcp.url, extra);
    for (what, claims) in [
        ("no sub, no client", json!({"sub": null, "client_id": null})),
        ("an empty sub", json!({"sub": "", "client_id": null})),
    ] {
        let (status, error, description) = whoami(&mcp, &jwt(claims)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(error, "invalid_token", "{what}");
        assert!(description.contains("sub"), "{what}: {description}");
    }
    // A client acting for itself is a principal.
    for claims in [
        json!({"sub": null}),
        json!({"sub": null, "client_id": null, "azp": "app"}),
    ] {
        let (status, _, _) = whoami(&mcp, &jwt(claims.clone())).await;
        assert_eq!(status, StatusCode::OK, "{claims}");
    }
    assert_eq!(mcp.runs(), 2);
    mcp.stop().await;
    auth_server.stop().await;

    let auth_server = AuthServer::start(&[]);
    let mcp = introspection_setup(&auth_server);
    let nobody = active(&auth_server, &mcp, json!({"sub": null, "client_id": null}));
    auth_server.answer("opaque-nobody", nobody);
    let (status, error, description) = whoami(&mcp, "opaque-nobody").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error, "invalid_token");
    assert!(description.contains("sub"), "{description}");
    assert_eq!(mcp.runs(), 0);
    mcp.stop().await;
    auth_server.stop().await;
}

/// F8: a POST without credentials, or with unusable ones, is answered 401 as soon as its
/// headers are in: the server does not wait for (nor read) the body it announced.
#[actix_rt::test]
async fn a_post_without_usable_credentials_is_refused_before_its_body_is_read() {
    let auth_server = AuthServer::start(&[]);
    let mcp = introspection_setup(&auth_server);
    let authority = mcp.origin.trim_start_matches("http://").to_owned();
    for authorization in [None, Some("Basic YWxpY2U6cGFzcw=="), Some("Bearer a b")] {
        let mut stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\n\
             Accept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: 4000000\r\n"
        );
        if let Some(value) = authorization {
            head.push_str(&format!("Authorization: {value}\r\n"));
        }
        head.push_str("\r\n{\"jsonrpc\":");
        stream.write_all(head.as_bytes()).await.unwrap();
        let started = Instant::now();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let read = tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buffer))
                .await
                .unwrap_or_else(|_| {
                    panic!("{authorization:?}: no answer in 3 s: the server waits for the body")
                })
                .unwrap();
            assert!(read > 0, "{authorization:?}: closed without an answer");
            answer.extend_from_slice(&buffer[..read]);
        }
        let answer = String::from_utf8_lossy(&answer).to_lowercase();
        assert!(
            answer.starts_with("http/1.1 401"),
            "{authorization:?}: {answer}"
        );
        assert!(answer.contains("www-authenticate: bearer"), "{answer}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    assert_eq!(auth_server.introspection_hits(), 0);
    mcp.stop().await;
    auth_server.stop().await;
}

/// F8: a refused token is introspected once, however often (or however many at once) it is
/// presented within the negative cache's lifetime; an accepted one still works.
#[actix_rt::test]
async fn a_refused_token_is_introspected_once() {
    let auth_server = AuthServer::start(&[]);
    let mcp = introspection_setup(&auth_server);
    auth_server.answer("opaque-carol", active(&auth_server, &mcp, json!({})));
    for _ in 0..5 {
        let (status, error, _) = whoami(&mcp, "opaque-unknown").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(error, "invalid_token");
    }
    assert_eq!(auth_server.introspection_hits(), 1, "sequential requests");
    auth_server.slow_introspection(Duration::from_millis(200));
    let burst = (0..8).map(|_| whoami(&mcp, "opaque-other-unknown"));
    for (status, error, _) in futures::future::join_all(burst).await {
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(error, "invalid_token");
    }
    assert_eq!(auth_server.introspection_hits(), 2, "concurrent requests");
    let (status, _, _) = whoami(&mcp, "opaque-carol").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(auth_server.introspection_hits(), 3);
    mcp.stop().await;
    auth_server.stop().await;
}

/// F8: however many distinct tokens arrive at once, only a few introspection calls are in
/// flight; the others wait for a slot and are answered all the same.
#[actix_rt::test]
async fn introspection_calls_in_flight_are_capped() {
    let auth_server = AuthServer::start(&[]);
    auth_server.slow_introspection(Duration::from_millis(150));
    let validator = IntrospectionValidator::builder(
        format!("{}/introspect", auth_server.url),
        ClientAuth::basic("mcp-server", "s3cret"),
    )
    .audience("https://mcp.example.com/mcp")
    .build()
    .unwrap();
    let tokens: Vec<String> = (0..40).map(|i| format!("opaque-flood-{i}")).collect();
    let checks = tokens.iter().map(|token| validator.validate(token));
    for outcome in futures::future::join_all(checks).await {
        let err = outcome.unwrap_err();
        assert!(matches!(err, AuthError::InvalidToken(_)), "{err}");
    }
    assert_eq!(auth_server.introspection_hits(), 40);
    let peak = auth_server.introspection_peak();
    assert!(
        peak <= 16,
        "{peak} introspection calls at once (the default cap)"
    );
    // A cap of its own: the twelve calls go three at a time, and all are answered.
    let validator = IntrospectionValidator::builder(
        format!("{}/introspect", auth_server.url),
        ClientAuth::basic("mcp-server", "s3cret"),
    )
    .audience("https://mcp.example.com/mcp")
    .max_concurrent_calls(3)
    .build()
    .unwrap();
    auth_server
        .state
        .introspection_peak
        .store(0, Ordering::SeqCst);
    let tokens: Vec<String> = (0..12).map(|i| format!("opaque-capped-{i}")).collect();
    let checks = tokens.iter().map(|token| validator.validate(token));
    for outcome in futures::future::join_all(checks).await {
        let err = outcome.unwrap_err();
        assert!(matches!(err, AuthError::InvalidToken(_)), "{err}");
    }
    assert_eq!(auth_server.introspection_hits(), 52);
    let peak = auth_server.introspection_peak();
    assert!(
        (2..=3).contains(&peak),
        "{peak} introspection calls at once (cap 3)"
    );
    auth_server.stop().await;
}

/// RFC 9449 §7.1: a DPoP-bound token (`cnf.jkt`) sent as a plain bearer token is refused,
/// whether a JWT carries the binding or introspection reports it.
#[actix_rt::test]
async fn a_dpop_bound_token_is_refused_as_a_bearer_token() {
    let (auth_server, mcp) = jwt_setup().await;
    let bound = token(
        "ec-a",
        Some("ec-a"),
        &auth_server.url,
        &mcp.url,
        json!({"cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
    );
    let (status, error, description) = whoami(&mcp, &bound).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error, "invalid_token");
    assert!(description.contains("DPoP"), "{description}");
    mcp.stop().await;
    auth_server.stop().await;

    let auth_server = AuthServer::start(&[]);
    let mcp = introspection_setup(&auth_server);
    let answer = active(
        &auth_server,
        &mcp,
        json!({"cnf": {"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}),
    );
    auth_server.answer("opaque-bound", answer);
    let (status, error, description) = whoami(&mcp, "opaque-bound").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(error, "invalid_token");
    assert!(description.contains("DPoP"), "{description}");
    // Sent with its own scheme it is refused too: this server does not check DPoP proofs.
    let call = json!({"name": "whoami", "arguments": {}});
    let response = send(
        mcp.v2026(2, "tools/call", call, None)
            .header(AUTHORIZATION, "DPoP opaque-bound"),
    )
    .await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(mcp.runs(), 0);
    mcp.stop().await;
    auth_server.stop().await;
}

/// RFC 9068 §4: a JWT access token typed otherwise than `at+jwt` (an ID token, a logout token,
/// ...) is refused; one without `typ` is accepted.
#[actix_rt::test]
async fn a_jwt_typed_otherwise_than_at_jwt_is_refused() {
    let auth_server = AuthServer::start(&["rsa-a"]);
    let audience = "https://mcp.example.com/mcp";
    let validator = auth_server.jwt_validator(audience).build().unwrap();
    let typed = |typ: Option<&str>| {
        token_typed(
            "rsa-a",
            Some("rsa-a"),
            typ,
            &auth_server.url,
            audience,
            json!({}),
        )
    };
    for typ in [
        None,
        Some("at+jwt"),
        Some("application/AT+JWT"),
        Some("AT+JWT"),
    ] {
        let outcome = validator.validate(&typed(typ)).await;
        assert!(outcome.is_ok(), "{typ:?}: {outcome:?}");
    }
    for typ in ["JWT", "id_token+jwt", "logout+jwt", "at+jwt+x"] {
        let err = validator.validate(&typed(Some(typ))).await.unwrap_err();
        assert!(matches!(err, AuthError::InvalidToken(_)), "{typ}: {err}");
    }
    // An authorization server typing its access tokens `JWT` is admitted by choice.
    let lenient = auth_server
        .jwt_validator(audience)
        .accept_token_type("JWT")
        .build()
        .unwrap();
    assert!(lenient.validate(&typed(Some("jwt"))).await.is_ok());
    assert!(lenient.validate(&typed(Some("logout+jwt"))).await.is_err());
    auth_server.stop().await;
}

/// A token without `kid` is tried against the first four keys of its algorithm only (keys of
/// other types do not count), not against a whole key set.
#[actix_rt::test]
async fn a_token_without_a_key_id_is_tried_against_four_keys_at_most() {
    let auth_server = AuthServer::start(&[]);
    let audience = "https://mcp.example.com/mcp";
    let renamed = |key: &str, kid: String| {
        let mut jwk = jwk(key);
        jwk["kid"] = json!(kid);
        jwk
    };
    let unnamed = token("rsa-a", None, &auth_server.url, audience, json!({}));
    // Four EC keys, three other RSA keys, then the signing key: the fourth RSA key.
    let mut keys: Vec<Value> = (0..4).map(|i| renamed("ec-a", format!("ec-{i}"))).collect();
    keys.extend((0..3).map(|i| renamed("rsa-b", format!("rsa-b-{i}"))));
    keys.push(jwk("rsa-a"));
    auth_server.set_jwks(keys);
    let validator = auth_server.jwt_validator(audience).build().unwrap();
    let identity = validator.validate(&unnamed).await.unwrap();
    assert_eq!(identity.subject(), Some("alice"));
    // Four other RSA keys before it: not tried.
    let mut keys: Vec<Value> = (0..4)
        .map(|i| renamed("rsa-b", format!("rsa-b-{i}")))
        .collect();
    keys.push(jwk("rsa-a"));
    auth_server.set_jwks(keys);
    let validator = auth_server.jwt_validator(audience).build().unwrap();
    let err = validator.validate(&unnamed).await.unwrap_err();
    assert!(matches!(err, AuthError::InvalidToken(_)), "{err}");
    // Named, the same key is found wherever it is.
    let named = token(
        "rsa-a",
        Some("rsa-a"),
        &auth_server.url,
        audience,
        json!({}),
    );
    assert!(validator.validate(&named).await.is_ok());
    auth_server.stop().await;
}
