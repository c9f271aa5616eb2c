//! The OAuth client against servers it must not trust with more than they are owed (the
//! security review's client findings): a token goes only to the resource it was issued for;
//! credentials and assertions go only to the authorization server they are bound to, whatever
//! the MCP server names; discovery and token requests reach no loopback, private or link-local
//! address the MCP server is not on itself (host names resolved by a test resolver); a server
//! URL's credentials stay out of messages. Every server runs on `127.0.0.1:0` and records
//! every request, and each test checks what was *not* sent.
#![cfg(all(feature = "client-http", feature = "auth"))]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::auth::{
    AuthError, ClientCredential, ClientCredentials, ClientRegistration, HeadlessAuthorizer,
    IdentityProvider, JwtBearer, OAuth, OAuthBuilder, SigningKey, token_with,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientError, Lifecycle};

use common::authz::{AuthConfig, AuthServer};
use common::hostile::{Protected, Recorder, authorization_server, protected};
use common::{WAIT, within_for};
use serde_json::json;

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
            .lifecycle(Lifecycle::V2025)
            .connect(HttpTransport::with_options(url, options.get_stream(false)))
            .await?;
        client.tools().await?;
        client.close().await;
        Ok(())
    };
    // A whole connection with its authorization: several requests, some of which go to
    // unroutable addresses and wait out the client's own time limit (SHORT).
    within_for(WAIT * 3, work).await
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

// ---------------------------------------------------------------------------------------------
// F3: discovery and token requests reach no internal address

/// A resolver that maps names to the addresses a test gives, and notes every name asked.
#[derive(Clone, Default)]
struct Names {
    map: Arc<HashMap<String, Vec<IpAddr>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Names {
    fn new(entries: &[(&str, &[&str])]) -> Self {
        let map = entries
            .iter()
            .map(|(name, ips)| {
                let ips = ips.iter().map(|ip| ip.parse().unwrap()).collect();
                ((*name).to_owned(), ips)
            })
            .collect();
        Self {
            map: Arc::new(map),
            asked: Arc::default(),
        }
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl reqwest::dns::Resolve for Names {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        self.asked.lock().unwrap().push(name.clone());
        let found = self.map.get(&name).cloned();
        Box::pin(async move {
            let ips = found.ok_or_else(|| format!("no such name {name}"))?;
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// Asserts that `error` refuses a URL naming `host`, for a reason that names `why`.
fn assert_refused(error: &AuthError, host: &str, why: &str) {
    match error {
        AuthError::InsecureUrl { url, reason } => {
            assert!(url.contains(host), "{error:?}");
            assert!(reason.contains(why), "{error:?}");
        }
        other => panic!("expected {host} refused ({why}), got {other:?}"),
    }
}

/// A short time limit: a request that goes out to an unroutable address fails soon.
const SHORT: Duration = Duration::from_secs(2);

#[actix_web::test]
async fn discovery_refuses_names_that_resolve_to_internal_addresses() {
    let names = Names::new(&[
        ("metadata.internal.test", &["10.1.2.3"]),
        ("as.internal.test", &["169.254.169.254"]),
        ("zero.internal.test", &["0.0.0.0"]),
        ("mixed.internal.test", &["203.0.113.10", "10.0.0.1"]),
        ("token.internal.test", &["fd00::1"]),
        ("register.internal.test", &["192.168.1.1"]),
    ]);
    // The challenge's resource_metadata link, to a private address, to 0.0.0.0 (which is
    // this host), to a name with one public and one private address.
    for (host, why) in [
        ("metadata.internal.test", "private"),
        ("zero.internal.test", "unspecified"),
        ("mixed.internal.test", "private"),
    ] {
        let hostile = protected(Protected {
            link: Box::new(move |_| Some(format!("https://{host}/prm"))),
            authorization_servers: None,
        });
        let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
            .dns_resolver(names.clone())
            .timeout(SHORT)
            .build()
            .unwrap();
        let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth).await);
        assert_refused(&error, host, why);
        hostile.stop().await;
    }

    // The same through a client the application gives, which resolves names itself: they
    // are resolved and checked before the request.
    let hostile = protected(Protected {
        link: Box::new(|_| Some("https://metadata.internal.test/prm".into())),
        authorization_servers: None,
    });
    let given = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(names.clone()))
        .build()
        .unwrap();
    let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
        .http_client(given)
        .dns_resolver(names.clone())
        .timeout(SHORT)
        .build()
        .unwrap();
    let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth).await);
    assert_refused(&error, "metadata.internal.test", "private");
    hostile.stop().await;

    // The authorization server the metadata names, on the link-local metadata address.
    let hostile = protected(Protected::naming(vec!["https://as.internal.test".into()]));
    let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
        .dns_resolver(names.clone())
        .timeout(SHORT)
        .build()
        .unwrap();
    let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth).await);
    assert_refused(&error, "as.internal.test", "link-local");
    hostile.stop().await;

    // The token endpoint of a (loopback) authorization server, on a unique-local address: the
    // client's secret is not sent.
    let server =
        authorization_server(|_| json!({"token_endpoint": "https://token.internal.test/token"}));
    let hostile = protected(Protected::naming(vec![server.base.clone()]));
    let oauth = OAuth::client_credentials(&server.base, "svc", ClientCredential::secret("s3cret"))
        .dns_resolver(names.clone())
        .timeout(SHORT);
    let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth.build().unwrap()).await);
    assert_refused(&error, "token.internal.test", "unique-local");
    assert_eq!(server.posts().len(), 0);
    hostile.stop().await;
    server.stop().await;

    // Its registration endpoint, on a private address.
    let server = authorization_server(
        |_| json!({"registration_endpoint": "https://register.internal.test/register"}),
    );
    let hostile = protected(Protected::naming(vec![server.base.clone()]));
    let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
        .dns_resolver(names.clone())
        .timeout(SHORT);
    let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth.build().unwrap()).await);
    assert_refused(&error, "register.internal.test", "private");
    hostile.stop().await;
    server.stop().await;

    // Every name was resolved before it was refused.
    let asked = names.asked();
    for name in ["metadata", "zero", "mixed", "as", "token", "register"] {
        let name = format!("{name}.internal.test");
        assert!(asked.contains(&name), "{name} not resolved: {asked:?}");
    }
}

#[actix_web::test]
async fn discovery_refuses_internal_literal_addresses() {
    // (The URL shows an IPv4-mapped address in hexadecimal.)
    for (link, host, why) in [
        (
            "https://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "link-local",
        ),
        ("https://10.0.0.1/prm", "10.0.0.1", "private"),
        ("https://[fd12:3456::1]/prm", "fd12:3456::1", "unique-local"),
        (
            "https://[::ffff:169.254.169.254]/prm",
            "::ffff:a9fe:a9fe",
            "link-local",
        ),
    ] {
        let hostile = protected(Protected {
            link: Box::new(move |_| Some(link.to_owned())),
            authorization_servers: None,
        });
        let oauth = OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new())
            .timeout(SHORT)
            .build()
            .unwrap();
        let error = auth_error(connect(&format!("{}/mcp", hostile.base), oauth).await);
        assert_refused(&error, host, why);
        hostile.stop().await;
    }
}

/// An MCP server that stands on a public address (`mcp.public.test`, which its transport
/// reaches on loopback while the OAuth client's resolver says 203.0.113.10), whose `401` links
/// to a service on this host's loopback: the client connects with `oauth`.
async fn public_server_linking_to_loopback(
    oauth: OAuthBuilder,
) -> (Result<(), ClientError>, Vec<String>) {
    let internal = Recorder::start(|_, _| actix_web::HttpResponse::NotFound().finish());
    let link = format!("{}/prm", internal.base);
    let hostile = protected(Protected {
        link: Box::new(move |_| Some(link.clone())),
        authorization_servers: None,
    });
    let port = hostile.base.rsplit(':').next().unwrap().to_owned();
    let transport = reqwest::Client::builder()
        .no_proxy()
        .resolve("mcp.public.test", "127.0.0.1:0".parse().unwrap())
        .build()
        .unwrap();
    let oauth = oauth
        .dns_resolver(Names::new(&[("mcp.public.test", &["203.0.113.10"])]))
        .timeout(SHORT)
        .build()
        .unwrap();
    let options = HttpOptions::default().client(transport).auth(oauth);
    let result = connect_with(&format!("http://mcp.public.test:{port}/mcp"), options).await;
    let reached = internal.lines();
    assert!(!hostile.seen().is_empty(), "the MCP server was reached");
    hostile.stop().await;
    internal.stop().await;
    (result, reached)
}

#[actix_web::test]
async fn a_public_mcp_server_cannot_lead_the_client_to_loopback() {
    let oauth = || OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new());
    let (result, reached) = public_server_linking_to_loopback(oauth()).await;
    assert_refused(&auth_error(result), "127.0.0.1", "loopback");
    assert_eq!(
        reached,
        Vec::<String>::new(),
        "nothing reached the loopback service"
    );

    // Allowed explicitly, the same link is followed.
    let (_, reached) = public_server_linking_to_loopback(oauth().allow_private_network(true)).await;
    assert_eq!(reached, ["GET /prm"]);
}

// ---------------------------------------------------------------------------------------------
// Secrets kept out of messages

#[actix_web::test]
async fn a_server_url_is_shown_without_its_credentials() {
    let transport = HttpTransport::new("http://alice:pa55word@[::1");
    let shown = format!("{transport:?}");
    assert!(
        !shown.contains("pa55word") && !shown.contains("alice"),
        "{shown}"
    );
    let connected = Client::builder("hostile-test", "1.0.0")
        .connect(transport)
        .await;
    let message = match connected {
        Err(ClientError::Transport(message)) => message,
        other => panic!("expected a transport error, got {other:?}"),
    };
    assert!(message.contains("invalid server URL"), "{message}");
    assert!(
        !message.contains("pa55word") && !message.contains("alice"),
        "{message}"
    );
}
