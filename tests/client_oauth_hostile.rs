//! The OAuth client against servers it must not trust with more than they are owed (the
//! security review's client findings): a token goes only to the resource it was issued for,
//! every server on `127.0.0.1:0` records every request, and each test checks what was *not*
//! sent.

#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_mcp::client::auth::{
    AuthError, ClientCredential, ClientCredentials, ClientRegistration, HeadlessAuthorizer,
    IdentityProvider, JwtBearer, OAuth, OAuthBuilder, SigningKey, token_with,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientError, Lifecycle};

use common::authz::{AuthConfig, AuthServer};
use common::hostile::{Protected, Recorder, authorization_server, protected};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(15);
const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// The authorization server the client's credentials belong to (never contacted: the hostile
/// MCP server names another).
const REAL_ISSUER: &str = "https://as.example.com";

/// Connects to `url` (2025-11-25) with `oauth`, lists the tools, closes.
async fn connect(url: &str, oauth: OAuth) -> Result<(), ClientError> {
    connect_with(url, HttpOptions::default().auth(oauth)).await
}

/// The same with `options` (which carry the auth).
async fn connect_with(url: &str, options: HttpOptions) -> Result<(), ClientError> {
    let work = async {
        let client = Client::builder("hostile-test", "1.0.0")
            .lifecycle(Lifecycle::Legacy)
            .connect(HttpTransport::with_options(url, options.get_stream(false)))
            .await?;
        client.tools().await?;
        client.close().await;
        Ok(())
    };
    tokio::time::timeout(WAIT, work)
        .await
        .expect("done in time")
}

fn auth_error(result: Result<(), ClientError>) -> AuthError {
    match result {
        Err(ClientError::Auth(error)) => error,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

/// The requests `server` got that carried an `Authorization` header.
fn authorized(server: &Recorder) -> Vec<String> {
    server
        .seen()
        .iter()
        .filter(|seen| seen.authorization.is_some())
        .map(|seen| seen.line())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// F10: a token is presented only where its resource covers the request

#[actix_web::test]
async fn a_token_goes_only_to_the_resource_it_was_issued_for() {
    let authz = AuthServer::start(AuthConfig::default());
    let legit = protected(Protected::naming(vec![authz.issuer.clone()]));
    let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
        .build()
        .unwrap();
    connect(&format!("{}/mcp", legit.base), oauth.clone())
        .await
        .unwrap();
    assert!(oauth.token().is_some());
    assert!(!authorized(&legit).is_empty(), "the resource got its token");

    // The same client, shared with a transport to another origin: that server gets no token
    // (it names no metadata, so the client ends with an error of its own).
    let other = protected(Protected {
        link: Box::new(|_| None),
        authorization_servers: None,
    });
    let error = auth_error(connect(&format!("{}/mcp", other.base), oauth.clone()).await);
    assert!(
        matches!(error, AuthError::NoResourceMetadata { .. }),
        "{error:?}"
    );
    assert_eq!(
        authorized(&other),
        Vec::<String>::new(),
        "no token elsewhere"
    );

    // Another path on the resource's own origin is not covered either.
    let before = authorized(&legit).len();
    let result = connect(&format!("{}/other/mcp", legit.base), oauth.clone()).await;
    assert!(result.is_err(), "{result:?}");
    let elsewhere: Vec<String> = authorized(&legit)
        .into_iter()
        .skip(before)
        .filter(|line| line.contains("/other/"))
        .collect();
    assert_eq!(elsewhere, Vec::<String>::new(), "no token on another path");

    other.stop().await;
    legit.stop().await;
    authz.stop().await;
}

// ---------------------------------------------------------------------------------------------
// F2: credentials and assertions go only to the authorization server they are bound to

/// How many times a token source was asked.
fn counted(
    token: &'static str,
) -> (
    Arc<AtomicUsize>,
    impl Fn() -> futures::future::Ready<Result<String, ClientError>> + Send + Sync,
) {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let source = move || {
        counter.fetch_add(1, Ordering::SeqCst);
        futures::future::ready(Ok(token.to_owned()))
    };
    (asked, source)
}

/// A hostile MCP server on loopback whose metadata names the attacker's authorization server
/// (also on loopback): the client connects with `oauth` and must send the attacker nothing.
async fn attacked(oauth: OAuthBuilder) -> (AuthError, Recorder) {
    let attacker = authorization_server(|_| json!({}));
    let hostile = protected(Protected::naming(vec![attacker.base.clone()]));
    let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth.build().unwrap()).await);
    assert!(
        matches!(error, AuthError::NoRegistration { ref issuer } if *issuer == attacker.base),
        "{error:?}"
    );
    assert_eq!(authorized(&hostile), Vec::<String>::new());
    hostile.stop().await;
    (error, attacker)
}

#[actix_web::test]
async fn browserless_credentials_never_reach_an_authorization_server_they_are_not_bound_to() {
    // Client credentials with a secret, then with a private key.
    let secret = OAuth::client_credentials(REAL_ISSUER, "svc", ClientCredential::secret("s3cret"));
    let key = SigningKey::generate_es256().unwrap();
    let keyed = OAuth::client_credentials(REAL_ISSUER, "svc", key);
    for oauth in [secret, keyed] {
        let (_, attacker) = attacked(oauth).await;
        assert_eq!(attacker.posts().len(), 0, "{:?}", attacker.posts());
        attacker.stop().await;
    }

    // Workload identity: the workload's token is not even asked for.
    let (asked, source) = counted("workload-jwt");
    let (_, attacker) = attacked(OAuth::jwt_bearer(
        REAL_ISSUER,
        "workload",
        token_with(source),
    ))
    .await;
    assert_eq!(attacker.posts().len(), 0, "{:?}", attacker.posts());
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    attacker.stop().await;

    // Enterprise-managed authorization: the identity provider is not asked to mint an ID-JAG
    // for the attacker, nor the user's ID token read.
    let idp = authorization_server(|_| json!({}));
    let (asked, source) = counted("id-token");
    let (_, attacker) = attacked(OAuth::enterprise(
        REAL_ISSUER,
        "xaa",
        ClientCredential::secret("xaa-secret"),
        IdentityProvider::new(idp.base.clone(), "idp-client"),
        token_with(source),
    ))
    .await;
    assert_eq!(attacker.posts().len(), 0, "{:?}", attacker.posts());
    assert_eq!(
        idp.lines(),
        Vec::<String>::new(),
        "the identity provider got nothing"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    attacker.stop().await;
    idp.stop().await;
}

#[actix_web::test]
async fn credentials_bound_to_the_named_server_are_sent_to_it() {
    // The control of the test above: the harness sees what is sent when it may be.
    let server = authorization_server(|_| json!({}));
    let resource = protected(Protected::naming(vec![server.base.clone()]));
    let oauth = OAuth::client_credentials(&server.base, "svc", ClientCredential::secret("s3cret"))
        .build()
        .unwrap();
    connect(&format!("{}/mcp", resource.base), oauth)
        .await
        .unwrap();
    let posts = server.posts();
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(posts[0].path, "/token");
    assert!(posts[0].body.contains("grant_type=client_credentials"));
    assert!(
        posts[0]
            .authorization
            .as_deref()
            .is_some_and(|a| a.starts_with("Basic "))
    );
    resource.stop().await;
    server.stop().await;
}

#[actix_web::test]
async fn unbound_pre_registrations_are_refused_where_they_could_leak() {
    let refused = |built: Result<OAuth, ClientError>| {
        assert!(
            matches!(built, Err(ClientError::Auth(AuthError::Config(ref why))) if why.contains("issuer")),
            "{built:?}"
        );
    };
    // A confidential client bound to no issuer, with any grant.
    let secret = ClientRegistration::pre_registered("svc").secret("s3cret");
    refused(
        OAuth::builder(ClientCredentials::new())
            .client_registration(secret.clone())
            .build(),
    );
    refused(
        OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
            .client_registration(secret)
            .build(),
    );
    let keyed = ClientRegistration::pre_registered("svc")
        .private_key(SigningKey::generate_es256().unwrap());
    refused(
        OAuth::builder(ClientCredentials::new())
            .client_registration(keyed)
            .build(),
    );
    // A public client bound to no issuer, with a grant that presents an assertion.
    refused(
        OAuth::builder(JwtBearer::new("workload-jwt".to_owned()))
            .client_registration(ClientRegistration::pre_registered("workload"))
            .build(),
    );
    // A public client bound to no issuer, with the authorization-code flow: usable (it sends
    // its client_id only).
    let public = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
        .client_registration(ClientRegistration::pre_registered("public-client"))
        .build();
    assert!(public.is_ok(), "{public:?}");
}
