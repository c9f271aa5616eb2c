//! The OAuth client against servers it must not trust with more than they are owed (the
//! security review's client findings): a token goes only to the resource it was issued for,
//! every server on `127.0.0.1:0` records every request, and each test checks what was *not*
//! sent.

#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::time::Duration;

use actix_mcp::client::auth::{AuthError, HeadlessAuthorizer, OAuth};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientError, Lifecycle};

use common::authz::{AuthConfig, AuthServer};
use common::hostile::{Protected, Recorder, protected};

const WAIT: Duration = Duration::from_secs(15);
const REDIRECT: &str = "http://127.0.0.1:9/callback";

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
