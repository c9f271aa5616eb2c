//! Bearer-protected servers: a real endpoint on `127.0.0.1:0` with `bearer_auth`, and a tiny
//! authorization server in process (a JWKS that tests change, an RFC 7662 introspection
//! endpoint; both in [`common::bearer`]). Tokens are minted with the committed test keys of
//! `tests/fixtures/auth/` (RS256 and ES256). Covers: the identity reaching handlers in both eras; every kind of bad
//! token refused with 401 `invalid_token` before any handler runs; key rotation and the
//! rate-limited refresh for unknown key ids; 403 `insufficient_scope` for tools, prompts,
//! resources and the server's base scopes; the protected resource metadata; sessions bound to
//! the identity that opened them; introspection.
#![cfg(all(feature = "http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use actix_mcp::server::auth::{
    AuthError, ClientAuth, IntrospectionValidator, JwtValidator, TokenValidator,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use serde_json::{Value, json};

use common::bearer::{
    AuthServer, McpServer, SESSION_VERSION, b64, challenge, fixture, jwt_setup, now, read, token,
};
use common::http::send;

#[actix_rt::test]
async fn a_valid_token_reaches_handlers_with_its_identity_in_both_eras() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    for key in ["rsa-a", "ec-a"] {
        let token = token(
            key,
            Some(key),
            &iss,
            &mcp.url,
            json!({"sub": format!("user-{key}"), "tenant": "acme", "scope": "mcp files:read"}),
        );
        // 2026-07-28: one stateless POST.
        let call = json!({"name": "whoami", "arguments": {}});
        let (status, message) =
            read(send(mcp.v2026(1, "tools/call", call, Some(&token))).await).await;
        assert_eq!(status, StatusCode::OK, "{message}");
        let seen: Value =
            serde_json::from_str(message["result"]["content"][0]["text"].as_str().unwrap())
                .unwrap();
        assert_eq!(
            seen,
            json!({"subject": format!("user-{key}"), "scopes": ["mcp", "files:read"],
                   "client": "cli", "tenant": "acme", "sawAuthorization": false,
                   "trace": "trace-42"})
        );
        // 2025-11-25: a session, a tool and a custom method.
        let session = mcp.open_session(&token).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "whoami", "arguments": {}}});
        let (status, message) =
            read(send(mcp.post(&call, Some(&token), Some(&session))).await).await;
        assert_eq!(status, StatusCode::OK, "{message}");
        assert!(
            message["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("\"subject\":\"user-{key}\""))
        );
        let custom = json!({"jsonrpc": "2.0", "id": 3, "method": "whoami/custom"});
        let (status, message) =
            read(send(mcp.post(&custom, Some(&token), Some(&session))).await).await;
        assert_eq!(status, StatusCode::OK, "{message}");
        assert!(
            message["result"]["who"]
                .as_str()
                .unwrap()
                .contains("\"sawAuthorization\":false")
        );
    }
    assert_eq!(mcp.runs(), 6);
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn every_bad_token_gets_401_invalid_token_and_no_handler_runs() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let aud = mcp.url.clone();
    let good = |extra: Value| token("rsa-a", Some("rsa-a"), &iss, &aud, extra);
    let unsigned =
        format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"at+jwt"}"#),
        b64(json!({"iss": iss, "aud": aud, "sub": "mallory", "scope": "mcp", "exp": now() + 300})
            .to_string()
            .as_bytes())
    );
    let forged_hs256 = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa-a".into());
        header.typ = Some("at+jwt".into());
        let claims =
            json!({"iss": iss, "aud": aud, "sub": "mallory", "scope": "mcp", "exp": now() + 300});
        jsonwebtoken::encode(
            &header,
            &claims,
            &EncodingKey::from_secret(&fixture("rsa-a.pub.pem")),
        )
        .unwrap()
    };
    let cases: Vec<(&str, String)> = vec![
        (
            "expired",
            good(json!({"exp": now() - 600, "iat": now() - 900})),
        ),
        ("not yet valid", good(json!({"nbf": now() + 600}))),
        (
            "wrong audience",
            good(json!({"aud": "http://127.0.0.1:1/other"})),
        ),
        ("no audience", good(json!({"aud": null}))),
        ("wrong issuer", good(json!({"iss": "http://127.0.0.1:1"}))),
        ("no expiry", good(json!({"exp": null}))),
        (
            "bad signature",
            token("ec-rogue", Some("ec-a"), &iss, &aud, json!({})),
        ),
        ("alg none", unsigned),
        ("HS256 with the public key", forged_hs256),
        (
            "unknown key id",
            token("ec-rogue", Some("ec-rogue"), &iss, &aud, json!({})),
        ),
        ("malformed", "not.a.jwt".to_owned()),
        ("garbage", "%%%".to_owned()),
    ];
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}});
    for (what, bad) in &cases {
        for v2026 in [false, true] {
            let request = if v2026 {
                mcp.v2026(
                    7,
                    "tools/call",
                    json!({"name": "whoami", "arguments": {}}),
                    None,
                )
                .header(AUTHORIZATION, format!("Bearer {bad}"))
            } else {
                mcp.post(&call, None, None)
                    .header(AUTHORIZATION, format!("Bearer {bad}"))
            };
            let response = send(request).await;
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{what}");
            let params = challenge(&response);
            assert_eq!(params["error"], "invalid_token", "{what}: {params:?}");
            assert!(!params["error_description"].is_empty(), "{what}");
            assert_eq!(params["resource_metadata"], mcp.metadata_url, "{what}");
            assert_eq!(params["scope"], "mcp", "{what}");
            let (_, body) = read(response).await;
            // A malformed token is refused before the body is read: no id to answer.
            let id = if *what == "garbage" {
                Value::Null
            } else {
                json!(7)
            };
            assert_eq!(body["id"], id, "{what}: {body}");
            assert!(body["error"]["message"].is_string(), "{what}: {body}");
        }
    }
    // Another scheme, and a token in the query string (even a good one).
    let basic = send(
        mcp.post(&call, None, None)
            .header(AUTHORIZATION, "Basic YWxpY2U6cGFzcw=="),
    )
    .await;
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(&basic)["error"], "invalid_token");
    let in_query = send(
        mcp.http
            .post(format!("{}?access_token={}", mcp.url, good(json!({}))))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(call.to_string()),
    )
    .await;
    assert_eq!(in_query.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(&in_query)["error"], "invalid_token");
    // No credentials at all: the challenge has no error code (RFC 6750 §3.1).
    let missing = send(mcp.post(&call, None, None)).await;
    assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
    let params = challenge(&missing);
    assert_eq!(params.get("error"), None);
    assert_eq!(params["resource_metadata"], mcp.metadata_url);
    assert_eq!(params["scope"], "mcp");
    let (_, body) = read(missing).await;
    assert_eq!(body["id"], Value::Null, "refused before the body is read");
    // A notification without a token: refused, with a null id.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = send(mcp.post(&note, None, None)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (_, body) = read(response).await;
    assert_eq!(body["id"], Value::Null);
    assert_eq!(mcp.runs(), 0, "a handler ran for a refused request");
    // The same good token works.
    let (status, _) = read(send(mcp.post(&call, Some(&good(json!({}))), None)).await).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "no session yet, but authenticated"
    );
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn a_rotated_key_is_picked_up_and_an_unknown_one_refreshes_once() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let call = json!({"name": "whoami", "arguments": {}});
    let old = token("rsa-a", Some("rsa-a"), &iss, &mcp.url, json!({}));
    let (status, _) = read(send(mcp.v2026(1, "tools/call", call.clone(), Some(&old))).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        auth_server.jwks_hits(),
        1,
        "the key set is fetched once and cached"
    );
    // A key the authorization server does not publish yet: one refresh, still unknown.
    let rotated = token("rsa-b", Some("rsa-b"), &iss, &mcp.url, json!({}));
    let response = send(mcp.v2026(2, "tools/call", call.clone(), Some(&rotated))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(challenge(&response)["error"], "invalid_token");
    assert_eq!(
        auth_server.jwks_hits(),
        2,
        "an unknown key id refreshes the key set"
    );
    // Now it is published (the old one retired): picked up.
    auth_server.set_keys(&["rsa-b", "ec-a"]);
    let (status, message) =
        read(send(mcp.v2026(3, "tools/call", call.clone(), Some(&rotated))).await).await;
    assert_eq!(status, StatusCode::OK, "{message}");
    assert_eq!(auth_server.jwks_hits(), 3);
    let response = send(mcp.v2026(4, "tools/call", call, Some(&old))).await;
    assert_eq!(
        response.status(),
        StatusCode::UNAUTHORIZED,
        "the retired key"
    );
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn unknown_key_ids_refresh_at_most_once_per_minimum_interval() {
    let auth_server = AuthServer::start(&["rsa-a"]);
    let iss = auth_server.url.clone();
    let audience = "https://mcp.example.com/mcp";
    let validator = auth_server
        .jwt_validator(audience)
        .min_refresh_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    let good = token("rsa-a", Some("rsa-a"), &iss, audience, json!({}));
    let identity = validator.validate(&good).await.unwrap();
    assert_eq!(identity.subject(), Some("alice"));
    assert_eq!(auth_server.jwks_hits(), 1);
    for i in 0..3 {
        let unknown = token(
            "ec-rogue",
            Some(&format!("kid-{i}")),
            &iss,
            audience,
            json!({}),
        );
        let err = validator.validate(&unknown).await.unwrap_err();
        assert!(matches!(err, AuthError::InvalidToken(_)), "{err}");
    }
    assert_eq!(
        auth_server.jwks_hits(),
        1,
        "a flood of unknown key ids is not a flood of fetches"
    );
    // A key set that cannot be fetched at all: the validator cannot decide (503), not 401.
    let unreachable = JwtValidator::builder("http://127.0.0.1:9/jwks")
        .issuer(&iss)
        .audience(audience)
        .fetch_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    for _ in 0..2 {
        // The second try comes before the retry is due: still undecided, not refused.
        let err = unreachable.validate(&good).await.unwrap_err();
        assert!(matches!(err, AuthError::Unavailable(_)), "{err}");
    }
    auth_server.stop().await;
}

#[actix_rt::test]
async fn missing_scopes_get_403_naming_what_is_needed() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let basic = token(
        "ec-a",
        Some("ec-a"),
        &iss,
        &mcp.url,
        json!({"scope": "mcp"}),
    );
    let cases = [
        (
            "tools/call",
            json!({"name": "write", "arguments": {}}),
            "mcp files:write",
        ),
        (
            "prompts/get",
            json!({"name": "secret"}),
            "mcp prompts:secret",
        ),
        (
            "resources/read",
            json!({"uri": "file:///vault.txt"}),
            "mcp vault:read",
        ),
    ];
    for (method, params, needed) in &cases {
        let response = send(mcp.v2026(9, method, params.clone(), Some(&basic))).await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{method}");
        let challenge = challenge(&response);
        assert_eq!(challenge["error"], "insufficient_scope", "{method}");
        assert_eq!(challenge["scope"], *needed, "{method}");
        assert_eq!(challenge["resource_metadata"], mcp.metadata_url);
        let (_, body) = read(response).await;
        assert_eq!(body["id"], 9, "{body}");
    }
    // The same in a session.
    let session = mcp.open_session(&basic).await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "write", "arguments": {}}});
    let response = send(mcp.post(&call, Some(&basic), Some(&session))).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(challenge(&response)["scope"], "mcp files:write");
    assert_eq!(mcp.runs(), 0, "a handler ran without its scopes");
    // Lists stay allowed and show everything.
    let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"});
    let (status, message) = read(send(mcp.post(&list, Some(&basic), Some(&session))).await).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = message["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["whoami", "write", "job", "confirm"]);
    // With the scope, the call runs.
    let writer = token(
        "ec-a",
        Some("ec-a"),
        &iss,
        &mcp.url,
        json!({"scope": "mcp files:write"}),
    );
    let (status, _) = read(send(mcp.post(&call, Some(&writer), Some(&session))).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(mcp.runs(), 1);
    // Without the server's base scope nothing is allowed, not even initialize or a GET.
    let none = token(
        "ec-a",
        Some("ec-a"),
        &iss,
        &mcp.url,
        json!({"scope": "files:write"}),
    );
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"}}});
    let response = send(mcp.post(&init, Some(&none), None)).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(challenge(&response)["scope"], "mcp");
    let response = send(mcp.get(Some(&none), &session)).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    mcp.stop().await;
    auth_server.stop().await;
}

/// The one `WWW-Authenticate` challenge of a response (there must be exactly one).
fn only_challenge(response: &reqwest::Response) -> HashMap<String, String> {
    let count = response.headers().get_all(WWW_AUTHENTICATE).iter().count();
    assert_eq!(count, 1, "one challenge, not {count}");
    challenge(response)
}

/// SEP-2350: a token lacking scopes gets one 403 `insufficient_scope` whose `scope` names every
/// scope the request needs (the server's and its tool's, prompt's, resource's or template's
/// together, held or not) and `resource_metadata`, before any handler runs or any stream
/// opens: in a 2025-11-25 session and in 2026-07-28, for a `subscriptions/listen` too.
#[actix_rt::test]
async fn one_challenge_names_every_scope_a_request_needs() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let with = |scope: &str| {
        token(
            "ec-a",
            Some("ec-a"),
            &iss,
            &mcp.url,
            json!({"scope": scope}),
        )
    };
    let holders = [
        // None of the scopes.
        "other",
        // Every item's scope, not the server's.
        "files:write prompts:secret vault:read notes:read",
        // The server's and one item's (enough for that item's read, not for the listen).
        "mcp vault:read",
    ];
    // Whether `held` has every scope of `needed`: the request is then served, not refused.
    let covers = |held: &str, needed: &str| {
        let held: Vec<&str> = held.split(' ').collect();
        needed.split(' ').all(|scope| held.contains(&scope))
    };
    let (vault, note) = ("file:///vault.txt", "file:///notes/today");
    let call = json!({"name": "write", "arguments": {}});
    let both = json!({"notifications": {"resourceSubscriptions": [vault, note, "file:///docs"]}});
    let mut cases = vec![
        ("tools/call", call.clone(), "mcp files:write"),
        (
            "prompts/get",
            json!({"name": "secret"}),
            "mcp prompts:secret",
        ),
        ("resources/read", json!({"uri": vault}), "mcp vault:read"),
        ("resources/read", json!({"uri": note}), "mcp notes:read"),
    ];
    let subscribe = (
        "resources/subscribe",
        json!({"uri": note}),
        "mcp notes:read",
    );
    let session = mcp.open_session(&with("mcp")).await;
    let mut id = 10;
    for held in holders {
        let holder = with(held);
        for (method, params, needed) in cases.iter().chain([&subscribe]) {
            if covers(held, needed) {
                continue;
            }
            id += 1;
            let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let response = send(mcp.post(&body, Some(&holder), Some(&session))).await;
            assert_eq!(
                response.status(),
                StatusCode::FORBIDDEN,
                "{method} {params}"
            );
            let challenge = only_challenge(&response);
            assert_eq!(challenge["error"], "insufficient_scope", "{method}");
            assert_eq!(challenge["scope"], *needed, "{method} {params}");
            assert_eq!(challenge["resource_metadata"], mcp.metadata_url);
            let (_, body) = read(response).await;
            assert_eq!(body["id"], id, "{body}");
        }
    }
    cases.push((
        "subscriptions/listen",
        both.clone(),
        "mcp vault:read notes:read",
    ));
    for held in holders {
        let holder = with(held);
        for (method, params, needed) in &cases {
            if covers(held, needed) {
                continue;
            }
            id += 1;
            let response = send(mcp.v2026(id, method, params.clone(), Some(&holder))).await;
            assert_eq!(
                response.status(),
                StatusCode::FORBIDDEN,
                "{method} {params}"
            );
            let challenge = only_challenge(&response);
            assert_eq!(challenge["error"], "insufficient_scope", "{method}");
            assert_eq!(challenge["scope"], *needed, "{method} {params}");
            assert_eq!(challenge["resource_metadata"], mcp.metadata_url);
            let (_, body) = read(response).await;
            assert_eq!(body["id"], id, "{body}");
        }
    }
    assert_eq!(mcp.runs(), 0, "a handler ran without its scopes");
    // With every scope the challenges named, each request is served (and the stream opens).
    let all = with("mcp files:write prompts:secret vault:read notes:read");
    for (method, params, _) in &cases[..4] {
        let (status, body) =
            read(send(mcp.v2026(1, method, params.clone(), Some(&all))).await).await;
        assert_eq!(status, StatusCode::OK, "{method}: {body}");
        assert!(body.get("result").is_some(), "{method}: {body}");
    }
    assert_eq!(mcp.runs(), 4);
    let stream = send(mcp.v2026(2, "subscriptions/listen", both, Some(&all))).await;
    assert_eq!(stream.status(), StatusCode::OK);
    drop(stream);
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn the_protected_resource_metadata_is_served_openly() {
    let (auth_server, mcp) = jwt_setup().await;
    assert_eq!(
        mcp.metadata_url,
        format!("{}/.well-known/oauth-protected-resource/mcp", mcp.origin)
    );
    for url in [
        mcp.metadata_url.clone(),
        format!("{}/.well-known/oauth-protected-resource", mcp.origin),
    ] {
        let response = send(mcp.http.get(&url).header("Origin", "https://app.example")).await;
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let document: Value = response.json().await.unwrap();
        assert_eq!(
            document,
            json!({
                "resource": mcp.url,
                "authorization_servers": [auth_server.url],
                "scopes_supported": ["mcp", "files:write", "prompts:secret", "vault:read", "notes:read"],
                "bearer_methods_supported": ["header"],
                "resource_name": "auth test",
            })
        );
    }
    let preflight = send(
        mcp.http
            .request(reqwest::Method::OPTIONS, &mcp.metadata_url)
            .header("Origin", "https://app.example")
            .header("Access-Control-Request-Method", "GET")
            .header("Access-Control-Request-Headers", "mcp-protocol-version"),
    )
    .await;
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(preflight.headers()["access-control-allow-origin"], "*");
    assert_eq!(
        preflight.headers()["access-control-allow-headers"],
        "mcp-protocol-version"
    );
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn a_session_serves_only_the_identity_that_opened_it() {
    let (auth_server, mcp) = jwt_setup().await;
    let iss = auth_server.url.clone();
    let alice = token(
        "rsa-a",
        Some("rsa-a"),
        &iss,
        &mcp.url,
        json!({"sub": "alice"}),
    );
    let bob = token("ec-a", Some("ec-a"), &iss, &mcp.url, json!({"sub": "bob"}));
    let session = mcp.open_session(&alice).await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}});
    // Bob, with a valid token, does not see Alice's session: POST, GET and DELETE.
    let response = send(mcp.post(&call, Some(&bob), Some(&session))).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        send(mcp.get(Some(&bob), &session)).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(mcp.delete(Some(&bob), &session)).await.status(),
        StatusCode::NOT_FOUND
    );
    // Without a token: 401 on every method.
    let response = send(mcp.post(&call, None, Some(&session))).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(!challenge(&response).contains_key("error"));
    let response = send(mcp.get(None, &session)).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (_, body) = read(response).await;
    assert_eq!(body["id"], Value::Null);
    assert_eq!(
        send(mcp.delete(None, &session)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(mcp.runs(), 0);
    // Alice, with a fresh token of hers (other scopes, same subject), still owns it.
    let alice_again = token(
        "ec-a",
        Some("ec-a"),
        &iss,
        &mcp.url,
        json!({"sub": "alice", "scope": "mcp files:write"}),
    );
    let (status, message) =
        read(send(mcp.post(&call, Some(&alice_again), Some(&session))).await).await;
    assert_eq!(status, StatusCode::OK, "{message}");
    assert!(
        message["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"scopes\":[\"mcp\",\"files:write\"]"),
        "the identity is the request's, not the session opener's"
    );
    let stream = send(mcp.get(Some(&alice), &session)).await;
    assert_eq!(stream.status(), StatusCode::OK);
    drop(stream);
    assert_eq!(
        send(mcp.delete(Some(&alice), &session)).await.status(),
        StatusCode::OK
    );
    mcp.stop().await;
    auth_server.stop().await;
}

#[actix_rt::test]
async fn introspection_validates_opaque_tokens_and_caches_active_answers() {
    let auth_server = AuthServer::start(&[]);
    let iss = auth_server.url.clone();
    let endpoint = format!("{iss}/introspect");
    let mcp = McpServer::start(
        |audience| {
            IntrospectionValidator::builder(&endpoint, ClientAuth::basic("mcp-server", "s3cret"))
                .issuer(&iss)
                .audience(audience)
                .build()
                .unwrap()
        },
        &iss,
    );
    {
        let mut answers = auth_server.state.introspection.lock().unwrap();
        let active = |sub: &str, aud: &str| {
            json!({"active": true, "sub": sub, "scope": "mcp", "client_id": "cli",
                   "iss": iss, "aud": aud, "exp": now() + 300, "token_type": "Bearer"})
        };
        answers.insert("opaque-carol".into(), active("carol", &mcp.url));
        answers.insert(
            "opaque-other".into(),
            active("dave", "https://other.example.com"),
        );
        answers.insert("opaque-revoked".into(), json!({"active": false}));
    }
    let call = json!({"name": "whoami", "arguments": {}});
    for id in 1..=2 {
        let (status, message) =
            read(send(mcp.v2026(id, "tools/call", call.clone(), Some("opaque-carol"))).await).await;
        assert_eq!(status, StatusCode::OK, "{message}");
        assert!(
            message["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("\"subject\":\"carol\"")
        );
    }
    assert_eq!(
        auth_server.state.introspection_hits.load(Ordering::SeqCst),
        1,
        "an active answer is cached"
    );
    for bad in ["opaque-other", "opaque-revoked", "opaque-unknown"] {
        let response = send(mcp.v2026(3, "tools/call", call.clone(), Some(bad))).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{bad}");
        assert_eq!(challenge(&response)["error"], "invalid_token", "{bad}");
    }
    assert_eq!(mcp.runs(), 2);
    mcp.stop().await;

    // Wrong client credentials: the server cannot decide, and says so with 503.
    let wrong = IntrospectionValidator::builder(&endpoint, ClientAuth::basic("mcp-server", "nope"))
        .audience("https://mcp.example.com/mcp")
        .build()
        .unwrap();
    let err = wrong.validate("opaque-carol").await.unwrap_err();
    assert!(matches!(err, AuthError::Unavailable(_)), "{err}");
    auth_server.stop().await;
}

/// A task and a sealed `requestState` belong to the caller that created them: another identity
/// cannot read, update, cancel or listen to the task (it is unknown to them), nor replay the
/// state.
#[actix_rt::test]
async fn tasks_and_request_states_belong_to_their_caller() {
    let (auth_server, mcp) = jwt_setup().await;
    let issuer = auth_server.url.clone();
    let alice = token("ec-a", Some("ec-a"), &issuer, &mcp.url, json!({}));
    let bob = token(
        "ec-a",
        Some("ec-a"),
        &issuer,
        &mcp.url,
        json!({"sub": "bob"}),
    );

    let call = json!({"name": "job", "arguments": {}});
    let (status, created) = read(send(mcp.v2026(1, "tools/call", call, Some(&alice))).await).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();

    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let mut params = json!({"taskId": task_id});
        if method == "tasks/update" {
            params["inputResponses"] = json!({});
        }
        let (_, answer) = read(send(mcp.v2026(2, method, params, Some(&bob))).await).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    let (_, task) =
        read(send(mcp.v2026(3, "tasks/get", json!({"taskId": task_id}), Some(&alice))).await).await;
    assert_eq!(
        task["result"]["status"], "working",
        "bob's cancel did nothing: {task}"
    );
    let (_, cancelled) =
        read(send(mcp.v2026(4, "tasks/cancel", json!({"taskId": task_id}), Some(&alice))).await)
            .await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");

    // The state alice got back cannot be replayed by bob.
    let ask = json!({"name": "confirm", "arguments": {}});
    let (_, asked) = read(send(mcp.v2026(5, "tools/call", ask.clone(), Some(&alice))).await).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let mut retry = ask.clone();
    retry["inputResponses"] = json!({"ok": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(state);
    let (_, stolen) = read(send(mcp.v2026(6, "tools/call", retry.clone(), Some(&bob))).await).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    let (_, done) = read(send(mcp.v2026(7, "tools/call", retry, Some(&alice))).await).await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"subject\":\"alice\""), "{done}");
    mcp.stop().await;
}
