//! The OAuth client's extensions against a small in-test authorization server and protected MCP
//! server ([`common::oauth_mock`]): the browserless grants (client credentials with a secret or
//! `private_key_jwt`, workload identity, enterprise-managed authorization through an identity
//! provider on the same app, and client credentials through the command-line client), and DPoP
//! with nonces on both sides. The authorization code flow is in `client_oauth.rs`. The mock
//! records every request, so each test checks the wire; every wait is bounded.
#![cfg(all(feature = "http", feature = "client-http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use actix_mcp::client::ClientError;
use actix_mcp::client::auth::{
    Algorithm, AuthError, ClientCredential, ClientCredentials, ClientRegistration, DpopKey,
    IdentityProvider, OAuth, SigningKey, token_with,
};
use base64::Engine as _;
use serde_json::Value;

use common::oauth_mock::*;
use common::{WAIT, within_for};

// ---------------------------------------------------------------------------------------------
// The extensions' grants

/// A PKCS#8 DER private key as PEM.
fn pem(der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect();
    format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    )
}

/// A fresh P-256 private key, as PEM.
fn p256_pem() -> String {
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    pem(pair.to_pkcs8v1().unwrap().as_ref())
}

/// A fresh 2048-bit RSA private key, as PEM.
fn rsa_pem() -> String {
    use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
    let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    pem(AsDer::<Pkcs8V1Der>::as_der(&pair).unwrap().as_ref())
}

fn m2m(grant: &str, methods: &[&'static str]) -> Config {
    let grant: &'static str = if grant == "client_credentials" {
        "client_credentials"
    } else {
        JWT_BEARER
    };
    Config {
        grants: Some(vec![grant]),
        auth_methods: Some(methods.to_vec()),
        ..Config::default()
    }
}

/// What every browserless grant leaves on the wire: no authorization request, no
/// registration, one token request for the MCP server's resource.
fn assert_browserless(mock: &Mock) -> HashMap<String, String> {
    assert!(mock.authorizations().is_empty());
    assert!(mock.registrations().is_empty());
    assert!(!mock.requests().iter().any(|r| r.contains("/register")));
    let requests = mock.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["resource"], mock.url());
    requests[0].clone()
}

#[actix_web::test]
async fn client_credentials_with_a_secret_authenticate_as_the_server_lists() {
    // client_secret_basic: form-encoded id and secret in the Basic header.
    let mock = start(m2m("client_credentials", &["client_secret_basic"]));
    let oauth = OAuth::client_credentials(&mock.base, "svc:1", ClientCredential::secret("s3 cret"))
        .build()
        .unwrap();
    run(&mock, oauth).await.unwrap();
    let form = assert_browserless(&mock);
    assert_eq!(form["grant_type"], "client_credentials");
    let basic = base64::engine::general_purpose::STANDARD.encode("svc%3A1:s3+cret");
    assert_eq!(form["authorization"], format!("Basic {basic}"));
    assert!(!form.contains_key("client_secret") && !form.contains_key("scope"));
    mock.stop().await;

    // client_secret_post, with the resource's scopes.
    let mock = start(Config {
        prm_scopes: Some(vec!["mcp:a", "mcp:b"]),
        ..m2m("client_credentials", &["client_secret_post"])
    });
    let oauth = OAuth::client_credentials(&mock.base, "svc", ClientCredential::secret("s3"))
        .build()
        .unwrap();
    run(&mock, oauth).await.unwrap();
    let form = assert_browserless(&mock);
    assert_eq!(form["client_id"], "svc");
    assert_eq!(form["client_secret"], "s3");
    assert_eq!(form["scope"], "mcp:a mcp:b");
    assert!(!form.contains_key("authorization"));
    mock.stop().await;
}

#[actix_web::test]
async fn private_key_jwt_assertions_verify_at_the_server_for_ec_and_rsa_keys() {
    for (pem, alg) in [
        (p256_pem(), Algorithm::ES256),
        (rsa_pem(), Algorithm::RS256),
    ] {
        let key = SigningKey::from_pem(&pem, alg).unwrap();
        let mock = start(Config {
            client_jwk: Some(key.public_jwk().unwrap()),
            ..m2m(
                "client_credentials",
                &["private_key_jwt", "client_secret_basic"],
            )
        });
        let oauth = OAuth::client_credentials(&mock.base, "svc", key)
            .build()
            .unwrap();
        run(&mock, oauth).await.unwrap();
        let form = assert_browserless(&mock);
        assert_eq!(form["client_assertion_type"], ASSERTION_TYPE);
        assert!(!form.contains_key("authorization"));
        mock.stop().await;
    }
    // An assertion signed with another key is refused, and nothing else is tried.
    let other = SigningKey::generate_es256().unwrap();
    let mock = start(Config {
        client_jwk: Some(other.public_jwk().unwrap()),
        ..m2m("client_credentials", &["private_key_jwt"])
    });
    let key = SigningKey::from_pem(p256_pem(), Algorithm::ES256).unwrap();
    let oauth = OAuth::client_credentials(&mock.base, "svc", key)
        .build()
        .unwrap();
    let error = auth_error(run(&mock, oauth).await);
    assert!(
        matches!(error, AuthError::TokenRequest { ref error, .. } if error == "invalid_client")
    );
    assert_eq!(mock.token_requests().len(), 1);
    mock.stop().await;
}

#[actix_web::test]
async fn browserless_grants_never_register() {
    let refused = OAuth::builder(ClientCredentials::new()).build();
    assert!(matches!(
        refused,
        Err(ClientError::Auth(AuthError::Config(_)))
    ));
    // Credentials for another authorization server: no registration instead.
    let mock = start(m2m("client_credentials", &["client_secret_basic"]));
    let oauth = OAuth::builder(ClientCredentials::new())
        .client_registration(
            ClientRegistration::pre_registered("svc")
                .secret("s3")
                .issuer("https://elsewhere.example.com"),
        )
        .build()
        .unwrap();
    let error = auth_error(run(&mock, oauth).await);
    assert!(
        matches!(error, AuthError::NoRegistration { .. }),
        "{error:?}"
    );
    assert!(mock.registrations().is_empty());
    assert!(mock.token_requests().is_empty());
    mock.stop().await;
}

#[actix_web::test]
async fn workload_identity_presents_the_sources_token_and_never_retries() {
    let mock = start(Config {
        dcr: false,
        ..m2m(JWT_BEARER, &["none"])
    });
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let source = token_with(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { Ok("workload-ok".to_owned()) }
    });
    let oauth = OAuth::jwt_bearer(&mock.base, "workload", source)
        .build()
        .unwrap();
    run(&mock, oauth).await.unwrap();
    let form = assert_browserless(&mock);
    assert_eq!(form["grant_type"], JWT_BEARER);
    assert_eq!(form["assertion"], "workload-ok");
    assert_eq!(form["client_id"], "workload");
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
    mock.stop().await;

    // A refused assertion fails the request: one token request, no other grant.
    let mock = start(Config {
        dcr: false,
        ..m2m(JWT_BEARER, &["none"])
    });
    let oauth = OAuth::jwt_bearer(&mock.base, "workload", "expired".to_owned())
        .build()
        .unwrap();
    let error = auth_error(run(&mock, oauth).await);
    assert!(matches!(error, AuthError::TokenRequest { ref error, .. } if error == "invalid_grant"));
    let requests = mock.token_requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(mock.authorizations().is_empty());
    mock.stop().await;
}

#[actix_web::test]
async fn enterprise_authorization_exchanges_the_id_token_for_an_id_jag() {
    for given_endpoint in [true, false] {
        let mock = start(m2m(JWT_BEARER, &["client_secret_basic"]));
        let mut idp = IdentityProvider::new(format!("{}/idp", mock.base), "idp-client");
        if given_endpoint {
            idp = idp.token_endpoint(format!("{}/idp/token", mock.base));
        }
        let oauth = OAuth::enterprise(
            &mock.base,
            "xaa-client",
            ClientCredential::secret("xaa-secret"),
            idp,
            "id-token-ok".to_owned(),
        )
        .build()
        .unwrap();
        run(&mock, oauth).await.unwrap();
        let exchange = &mock.idp_requests()[0];
        assert_eq!(exchange["grant_type"], TOKEN_EXCHANGE);
        assert_eq!(exchange["requested_token_type"], ID_JAG);
        assert_eq!(exchange["subject_token"], "id-token-ok");
        assert_eq!(exchange["audience"], mock.base);
        assert_eq!(exchange["resource"], mock.url());
        assert_eq!(exchange["client_id"], "idp-client");
        let form = assert_browserless(&mock);
        assert_eq!(form["grant_type"], JWT_BEARER);
        assert_eq!(
            form["assertion"],
            format!("jag:{}|{}", mock.base, mock.url())
        );
        let basic = base64::engine::general_purpose::STANDARD.encode("xaa-client:xaa-secret");
        assert_eq!(form["authorization"], format!("Basic {basic}"));
        assert_eq!(
            mock.saw("GET /.well-known/oauth-authorization-server/idp"),
            !given_endpoint
        );
        mock.stop().await;
    }
    // What the identity provider issued is not an ID-JAG: nothing goes to the AS.
    let mock = start(Config {
        idp_issued_type: "urn:ietf:params:oauth:token-type:access_token",
        ..m2m(JWT_BEARER, &["client_secret_basic"])
    });
    let idp = IdentityProvider::new(format!("{}/idp", mock.base), "idp-client")
        .token_endpoint(format!("{}/idp/token", mock.base));
    let oauth = OAuth::enterprise(
        &mock.base,
        "c",
        ClientCredential::secret("s"),
        idp,
        "id-token-ok".to_owned(),
    )
    .build()
    .unwrap();
    let error = auth_error(run(&mock, oauth).await);
    assert!(matches!(error, AuthError::Fetch { .. }), "{error:?}");
    assert!(mock.token_requests().is_empty());
    mock.stop().await;
}

// ---------------------------------------------------------------------------------------------
// DPoP

fn dpop_config() -> Config {
    Config {
        dpop_algs: Some(vec!["ES256"]),
        as_nonce: Some("as-nonce-1"),
        rs_nonce: Some("rs-nonce-1"),
        ..Config::default()
    }
}

#[actix_web::test]
async fn dpop_binds_the_token_and_meets_the_nonces_of_both_servers() {
    let mock = start(dpop_config());
    let key = DpopKey::generate().unwrap();
    let thumbprint = key.thumbprint().to_owned();
    let oauth = oauth().dpop(key).build().unwrap();
    run(&mock, oauth.clone()).await.unwrap();

    // The first 401 was a DPoP challenge; one authorization, bound to the key.
    assert_eq!(mock.authorizations().len(), 1, "no new authorization");
    assert_eq!(mock.authorizations()[0]["dpop_jkt"], thumbprint);
    assert_eq!(
        oauth.dpop_key().map(DpopKey::thumbprint),
        Some(thumbprint.as_str())
    );

    let proofs = mock.proofs();
    let jtis: std::collections::HashSet<&str> = proofs
        .iter()
        .filter_map(|(_, c)| c["jti"].as_str())
        .collect();
    assert_eq!(jtis.len(), proofs.len(), "every proof is fresh");
    // The token endpoint: a proof without the nonce, refused, then one with it.
    let token: Vec<&Value> = proofs
        .iter()
        .filter(|(at, _)| *at == "token")
        .map(|(_, c)| c)
        .collect();
    assert_eq!(token.len(), 2, "{token:?}");
    assert!(token[0].get("nonce").is_none());
    assert_eq!(token[1]["nonce"], "as-nonce-1");
    assert_eq!(mock.token_requests().len(), 2);
    // The MCP server: the first proof without its nonce, then every one with it.
    let mcp: Vec<&Value> = proofs
        .iter()
        .filter(|(at, _)| *at == "mcp")
        .map(|(_, c)| c)
        .collect();
    assert!(mcp.len() >= 4, "{mcp:?}");
    assert!(mcp[0].get("nonce").is_none());
    assert!(
        mcp[1..]
            .iter()
            .all(|claims| claims["nonce"] == "rs-nonce-1")
    );
    // Never as a bearer token.
    let authorizations = mock.mcp_authorizations();
    assert!(
        authorizations.iter().all(|a| a.starts_with("DPoP tok-")),
        "{authorizations:?}"
    );
    mock.stop().await;
}

#[actix_web::test]
async fn dpop_auto_follows_what_the_authorization_server_offers() {
    // Offered: proofs and a bound token.
    let mock = start(Config {
        dpop_algs: Some(vec!["RS256", "ES256"]),
        ..Config::default()
    });
    run(&mock, oauth().dpop_auto().build().unwrap())
        .await
        .unwrap();
    assert!(mock.authorizations()[0].contains_key("dpop_jkt"));
    assert!(!mock.proofs().is_empty());
    assert!(
        mock.mcp_authorizations()
            .iter()
            .all(|a| a.starts_with("DPoP "))
    );
    mock.stop().await;
    // Not offered: a plain bearer flow.
    let mock = start(Config::default());
    run(&mock, oauth().dpop_auto().build().unwrap())
        .await
        .unwrap();
    assert!(!mock.authorizations()[0].contains_key("dpop_jkt"));
    assert!(mock.proofs().is_empty());
    assert!(
        mock.mcp_authorizations()
            .iter()
            .all(|a| a.starts_with("Bearer "))
    );
    mock.stop().await;
}

#[actix_web::test]
async fn client_credentials_can_be_dpop_bound_too() {
    let mock = start(Config {
        dpop_algs: Some(vec!["ES256"]),
        as_nonce: Some("n"),
        ..m2m("client_credentials", &["client_secret_basic"])
    });
    let oauth = OAuth::client_credentials(&mock.base, "svc", ClientCredential::secret("s3"))
        .dpop_generate()
        .build()
        .unwrap();
    run(&mock, oauth).await.unwrap();
    let requests = mock.token_requests();
    assert_eq!(requests.len(), 2, "one nonce retry");
    assert_eq!(
        requests[0], requests[1],
        "the same request, with a new proof"
    );
    assert!(
        mock.mcp_authorizations()
            .iter()
            .all(|a| a.starts_with("DPoP "))
    );
    mock.stop().await;
}

// ---------------------------------------------------------------------------------------------
// The command-line client

#[actix_web::test]
async fn the_cli_runs_client_credentials_with_a_private_key() {
    let pem = p256_pem();
    let key = SigningKey::from_pem(&pem, Algorithm::ES256).unwrap();
    let mock = start(Config {
        client_jwk: Some(key.public_jwk().unwrap()),
        ..m2m("client_credentials", &["private_key_jwt"])
    });
    let dir = std::env::temp_dir().join(format!("actix-mcp-cli-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("key.pem");
    std::fs::write(&key_file, pem).unwrap();
    let mut command = tokio::process::Command::new(common::pipe::example_binary("client"));
    command
        .args([
            "--url",
            &mock.url(),
            "--oauth",
            "--oauth-client-credentials",
        ])
        .args(["--oauth-client-id", "svc", "--oauth-issuer", &mock.base])
        .arg("--oauth-private-key")
        .arg(&key_file)
        .arg("tools")
        .kill_on_drop(true);
    // A process of its own, and a whole authorization.
    let output = within_for(WAIT * 4, command.output()).await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tools: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(tools[0]["name"], "t");
    let form = assert_browserless(&mock);
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["client_assertion_type"], ASSERTION_TYPE);
    mock.stop().await;
}
