//! The OAuth client against a small in-test authorization server and protected MCP server
//! (one actix-web app on `127.0.0.1:0`): challenge parsing, the discovery order, the issuer and
//! resource checks, RFC 9207 `iss` checks, scope selection and step-up, PKCE, the choice of
//! registration, token endpoint authentication and refresh. The mock records every request, so
//! each test checks the wire; every wait is bounded.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::auth::{
    AuthError, BearerChallenge, Challenge, ClientRegistration, HeadlessAuthorizer, OAuth,
    OAuthBuilder, TokenEndpointAuth, authorization_server_metadata_urls,
    protected_resource_metadata_urls,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientError, Lifecycle};
use actix_web::dev::ServerHandle;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

const WAIT: Duration = Duration::from_secs(10);
const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// What the mock authorization server puts in the redirect's `iss`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Iss {
    Correct,
    Missing,
    Wrong,
    TrailingSlash,
}

/// The `resource` the protected resource metadata publishes.
#[derive(Debug, Clone)]
enum Resource {
    /// The MCP endpoint's URL.
    Endpoint,
    /// The bare origin, without a trailing slash.
    Origin,
    /// Another URL.
    Other(&'static str),
}

/// How the mock behaves.
#[derive(Debug, Clone)]
struct Config {
    /// Where the protected resource metadata is served (`None`: nowhere).
    prm_path: Option<&'static str>,
    /// Whether the 401 challenge links to it.
    prm_in_header: bool,
    /// Its `resource`.
    prm_resource: Resource,
    /// The challenge's `resource_metadata`, when not the real one.
    prm_link: Option<&'static str>,
    prm_scopes: Option<Vec<&'static str>>,
    /// The scope of the 401 challenge.
    challenge_scope: Option<&'static str>,
    /// The issuer's path (`""` or `/tenant1`).
    as_prefix: &'static str,
    /// Where the authorization server metadata is served.
    as_metadata_path: &'static str,
    /// Its `issuer`, when not the real one.
    issuer_override: Option<String>,
    iss: Iss,
    iss_advertised: bool,
    pkce: bool,
    cimd: bool,
    dcr: bool,
    auth_methods: Option<Vec<&'static str>>,
    as_scopes: Option<Vec<&'static str>>,
    /// `tools/call` needs this scope (else 403 insufficient_scope).
    call_scope: Option<&'static str>,
    /// Tokens expire at once and come with refresh tokens.
    short_lived: bool,
    /// Tokens are granted no scope, whatever was asked.
    grant_nothing: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            prm_path: Some("/.well-known/oauth-protected-resource/mcp"),
            prm_in_header: true,
            prm_resource: Resource::Endpoint,
            prm_link: None,
            prm_scopes: None,
            challenge_scope: None,
            as_prefix: "",
            as_metadata_path: "/.well-known/oauth-authorization-server",
            issuer_override: None,
            iss: Iss::Correct,
            iss_advertised: true,
            pkce: true,
            cimd: false,
            dcr: true,
            auth_methods: Some(vec!["none"]),
            as_scopes: None,
            call_scope: None,
            short_lived: false,
            grant_nothing: false,
        }
    }
}

/// What the mock saw and issued.
#[derive(Debug, Default)]
struct Seen {
    /// `METHOD path` of every request, in order.
    requests: Vec<String>,
    /// The query of every authorization request.
    authorizations: Vec<HashMap<String, String>>,
    /// The form of every token request, with `authorization` (the header) added.
    token_requests: Vec<HashMap<String, String>>,
    /// The body of every registration request.
    registrations: Vec<Value>,
    /// The PKCE challenge of each code.
    challenges: HashMap<String, String>,
    /// The scopes of each issued access token.
    tokens: HashMap<String, Vec<String>>,
    /// Whether every code verifier matched its challenge.
    pkce_failures: usize,
    counter: usize,
}

struct State {
    config: Config,
    base: String,
    seen: Mutex<Seen>,
}

impl State {
    fn issuer(&self) -> String {
        format!("{}{}", self.base, self.config.as_prefix)
    }
}

struct Mock {
    base: String,
    state: Arc<State>,
    handle: ServerHandle,
}

impl Mock {
    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn requests(&self) -> Vec<String> {
        self.state.seen.lock().unwrap().requests.clone()
    }

    fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().authorizations.clone()
    }

    fn token_requests(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().token_requests.clone()
    }

    fn registrations(&self) -> Vec<Value> {
        self.state.seen.lock().unwrap().registrations.clone()
    }

    fn saw(&self, request: &str) -> bool {
        self.requests().iter().any(|r| r == request)
    }

    async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .unwrap();
    }
}

fn query_map(query: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

fn challenge_header(state: &State, error: &str, scope: Option<&str>) -> String {
    let mut value = format!("Bearer error=\"{error}\"");
    if let Some(scope) = scope {
        value.push_str(&format!(", scope=\"{scope}\""));
    }
    if let Some(link) = state.config.prm_link {
        value.push_str(&format!(", resource_metadata=\"{link}\""));
    } else if state.config.prm_in_header
        && let Some(path) = state.config.prm_path
    {
        value.push_str(&format!(", resource_metadata=\"{}{path}\"", state.base));
    }
    value
}

async fn mcp(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let scopes = token
        .as_ref()
        .and_then(|t| state.seen.lock().unwrap().tokens.get(t).cloned());
    let Some(scopes) = scopes else {
        return HttpResponse::Unauthorized()
            .insert_header((
                header::WWW_AUTHENTICATE,
                challenge_header(&state, "invalid_token", state.config.challenge_scope),
            ))
            .json(json!({"error": "invalid_token"}));
    };
    if method == "tools/call"
        && let Some(needed) = state.config.call_scope
        && !scopes.iter().any(|s| s == needed)
    {
        return HttpResponse::Forbidden()
            .insert_header((
                header::WWW_AUTHENTICATE,
                challenge_header(&state, "insufficient_scope", Some(needed)),
            ))
            .json(json!({"error": "insufficient_scope"}));
    }
    let id = message["id"].clone();
    let result = match method.as_str() {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mock", "version": "1"},
        }),
        "tools/list" => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
        _ if id.is_null() => return HttpResponse::Accepted().finish(),
        _ => {
            return HttpResponse::Ok().json(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "no such method"},
            }));
        }
    };
    HttpResponse::Ok().json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn prm(state: web::Data<State>) -> HttpResponse {
    let resource = match &state.config.prm_resource {
        Resource::Endpoint => format!("{}/mcp", state.base),
        Resource::Origin => state.base.clone(),
        Resource::Other(url) => (*url).to_owned(),
    };
    let mut metadata = json!({
        "resource": resource,
        "authorization_servers": [state.issuer()],
    });
    if let Some(scopes) = &state.config.prm_scopes {
        metadata["scopes_supported"] = json!(scopes);
    }
    HttpResponse::Ok().json(metadata)
}

async fn as_metadata(state: web::Data<State>) -> HttpResponse {
    let issuer = state.issuer();
    let config = &state.config;
    let mut metadata = json!({
        "issuer": config.issuer_override.clone().unwrap_or_else(|| issuer.clone()),
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "authorization_response_iss_parameter_supported": config.iss_advertised,
        "client_id_metadata_document_supported": config.cimd,
    });
    if config.dcr {
        metadata["registration_endpoint"] = json!(format!("{issuer}/register"));
    }
    if config.pkce {
        metadata["code_challenge_methods_supported"] = json!(["S256"]);
    }
    if let Some(methods) = &config.auth_methods {
        metadata["token_endpoint_auth_methods_supported"] = json!(methods);
    }
    if let Some(scopes) = &config.as_scopes {
        metadata["scopes_supported"] = json!(scopes);
    }
    HttpResponse::Ok().json(metadata)
}

async fn authorize(req: HttpRequest, state: web::Data<State>) -> HttpResponse {
    let query = query_map(req.query_string());
    let code = {
        let mut seen = state.seen.lock().unwrap();
        seen.counter += 1;
        let code = format!("code-{}", seen.counter);
        seen.challenges.insert(
            code.clone(),
            query.get("code_challenge").cloned().unwrap_or_default(),
        );
        let scopes = query.get("scope").cloned().unwrap_or_default();
        seen.challenges.insert(format!("{code}:scope"), scopes);
        seen.authorizations.push(query.clone());
        code
    };
    let mut location = url::Url::parse(&query["redirect_uri"]).unwrap();
    location.query_pairs_mut().append_pair("code", &code);
    if let Some(s) = query.get("state") {
        location.query_pairs_mut().append_pair("state", s);
    }
    let issuer = state.issuer();
    match state.config.iss {
        Iss::Correct => {
            location.query_pairs_mut().append_pair("iss", &issuer);
        }
        Iss::Wrong => {
            location
                .query_pairs_mut()
                .append_pair("iss", "https://evil.example.com");
        }
        Iss::TrailingSlash => {
            location
                .query_pairs_mut()
                .append_pair("iss", &format!("{issuer}/"));
        }
        Iss::Missing => {}
    }
    HttpResponse::Found()
        .insert_header((header::LOCATION, location.to_string()))
        .finish()
}

async fn token(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let mut form = query_map(std::str::from_utf8(&body).unwrap_or_default());
    if let Some(auth) = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        form.insert("authorization".into(), auth.to_owned());
    }
    let mut seen = state.seen.lock().unwrap();
    seen.token_requests.push(form.clone());
    let scopes = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = form.get("code").cloned().unwrap_or_default();
            let challenge = seen.challenges.get(&code).cloned().unwrap_or_default();
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(verifier.as_bytes()));
            if challenge.is_empty() || computed != challenge {
                seen.pkce_failures += 1;
                return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}));
            }
            seen.challenges
                .get(&format!("{code}:scope"))
                .cloned()
                .unwrap_or_default()
        }
        Some("refresh_token") => {
            let old = form.get("refresh_token").cloned().unwrap_or_default();
            match old.strip_prefix("refresh-for:") {
                Some(scopes) => scopes.to_owned(),
                None => return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"})),
            }
        }
        _ => return HttpResponse::BadRequest().json(json!({"error": "unsupported_grant_type"})),
    };
    let scopes = if state.config.grant_nothing {
        String::new()
    } else {
        scopes
    };
    seen.counter += 1;
    let access = format!("tok-{}", seen.counter);
    seen.tokens.insert(
        access.clone(),
        scopes
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
    );
    let mut answer = json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600});
    if state.config.short_lived {
        answer["expires_in"] = json!(1);
        answer["refresh_token"] = json!(format!("refresh-for:{scopes}"));
    }
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(answer)
}

async fn register(body: web::Json<Value>, state: web::Data<State>) -> HttpResponse {
    let mut seen = state.seen.lock().unwrap();
    seen.registrations.push(body.0.clone());
    seen.counter += 1;
    let method = body["token_endpoint_auth_method"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    let mut answer = json!({
        "client_id": format!("dyn-{}", seen.counter),
        "token_endpoint_auth_method": method,
    });
    if method != "none" {
        answer["client_secret"] = json!("dyn-secret");
    }
    HttpResponse::Created().json(answer)
}

/// Starts the mock with `config` on `127.0.0.1:0`.
fn start(config: Config) -> Mock {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let state = Arc::new(State {
        config: config.clone(),
        base: base.clone(),
        seen: Mutex::new(Seen::default()),
    });
    let data = web::Data::from(state.clone());
    let server = actix_web::HttpServer::new(move || {
        let prefix = config.as_prefix;
        let mut app = actix_web::App::new()
            .app_data(data.clone())
            .wrap_fn(|req, srv| {
                let line = format!("{} {}", req.method(), req.path());
                if let Some(state) = req.app_data::<web::Data<State>>() {
                    state.seen.lock().unwrap().requests.push(line);
                }
                actix_web::dev::Service::call(srv, req)
            })
            .route("/mcp", web::post().to(mcp))
            .route("/mcp", web::get().to(HttpResponse::MethodNotAllowed))
            .route(config.as_metadata_path, web::get().to(as_metadata))
            .route(&format!("{prefix}/authorize"), web::get().to(authorize))
            .route(&format!("{prefix}/token"), web::post().to(token))
            .route(&format!("{prefix}/register"), web::post().to(register));
        if let Some(path) = config.prm_path {
            app = app.route(path, web::get().to(prm));
        }
        app
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_rt::spawn(server);
    Mock {
        base,
        state,
        handle,
    }
}

fn oauth() -> OAuthBuilder {
    OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new()).client_name("oauth-test")
}

/// Connects (2025-11-25) with `oauth`, lists the tools and calls one.
async fn run(mock: &Mock, oauth: OAuth) -> Result<(), ClientError> {
    let options = HttpOptions::default().get_stream(false).auth(oauth);
    let work = async {
        let client = Client::builder("oauth-test", "1.0.0")
            .lifecycle(Lifecycle::Legacy)
            .connect(HttpTransport::with_options(mock.url(), options))
            .await?;
        client.tools().await?;
        client.call_tool("t", json!({})).await?;
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

fn scope_of(query: &HashMap<String, String>) -> Option<&str> {
    query.get("scope").map(String::as_str)
}

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

/// `target/<profile>/examples/<name>`, built by `cargo test` or `cargo build --example <name>`.
fn example_binary(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let binary = profile
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --example {name}`",
        binary.display()
    );
    binary
}

#[actix_web::test]
async fn the_cli_authorizes_with_the_flags_it_is_given() {
    let mock = start(Config {
        auth_methods: Some(vec!["client_secret_post"]),
        ..Config::default()
    });
    let mut command = tokio::process::Command::new(example_binary("client"));
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
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .expect("the client finished in time")
        .unwrap();
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
