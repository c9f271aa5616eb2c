//! Bearer-protected servers: a real endpoint on `127.0.0.1:0` with `bearer_auth`, and a tiny
//! authorization server in process (a JWKS that tests change, an RFC 7662 introspection
//! endpoint). Tokens are minted with the committed test keys of `tests/fixtures/auth/`
//! (RS256 and ES256). Covers: the identity reaching handlers in both eras; every kind of bad
//! token refused with 401 `invalid_token` before any handler runs; key rotation and the
//! rate-limited refresh for unknown key ids; 403 `insufficient_scope` for tools, prompts,
//! resources and the server's base scopes; the protected resource metadata; sessions bound to
//! the identity that opened them; introspection.

#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::server::auth::{
    AuthError, BearerAuth, ClientAuth, IntrospectionValidator, JwtValidator, TokenValidator,
};
use actix_mcp::transport::http::McpHttp;
use actix_web::dev::ServerHandle;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use serde_json::{Value, json};

use common::WAIT;
use common::http::{http_client, send};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/auth");
const MODERN: &str = "2026-07-28";
const SESSION_VERSION: &str = "2025-11-25";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

/// The public JWKs of the test keys, by key id.
fn jwk(kid: &str) -> Value {
    let all: Value = serde_json::from_slice(&fixture("jwks.json")).unwrap();
    all[kid].clone()
}

/// A test signing key: `rsa-a`, `rsa-b` (RS256), `ec-a`, `ec-rogue` (ES256).
fn signing_key(name: &str) -> (Algorithm, EncodingKey) {
    let pem = fixture(&format!("{name}.pem"));
    if name.starts_with("rsa") {
        (Algorithm::RS256, EncodingKey::from_rsa_pem(&pem).unwrap())
    } else {
        (Algorithm::ES256, EncodingKey::from_ec_pem(&pem).unwrap())
    }
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

// ---------------------------------------------------------------------------------------------
// The authorization server: a JWKS and an introspection endpoint.

#[derive(Default)]
struct AsState {
    jwks: Mutex<Vec<Value>>,
    jwks_hits: AtomicUsize,
    /// Introspection answers by token.
    introspection: Mutex<HashMap<String, Value>>,
    introspection_hits: AtomicUsize,
}

struct AuthServer {
    url: String,
    state: Arc<AsState>,
    handle: ServerHandle,
}

impl AuthServer {
    fn start(keys: &[&str]) -> Self {
        let state = Arc::new(AsState::default());
        *state.jwks.lock().unwrap() = keys.iter().map(|k| jwk(k)).collect();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let app_state = state.clone();
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(web::Data::from(app_state.clone()))
                .route("/jwks", web::get().to(jwks))
                .route("/introspect", web::post().to(introspect))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Self {
            url: format!("http://127.0.0.1:{port}"),
            state,
            handle,
        }
    }

    fn set_keys(&self, keys: &[&str]) {
        *self.state.jwks.lock().unwrap() = keys.iter().map(|k| jwk(k)).collect();
    }

    fn jwks_hits(&self) -> usize {
        self.state.jwks_hits.load(Ordering::SeqCst)
    }

    fn jwt_validator(&self, audience: &str) -> actix_mcp::server::auth::JwtValidatorBuilder {
        JwtValidator::builder(format!("{}/jwks", self.url))
            .issuer(&self.url)
            .audience(audience)
            .leeway(Duration::from_secs(5))
    }

    async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .unwrap();
    }
}

async fn jwks(state: web::Data<AsState>) -> HttpResponse {
    state.jwks_hits.fetch_add(1, Ordering::SeqCst);
    let keys = state.jwks.lock().unwrap().clone();
    HttpResponse::Ok().json(json!({"keys": keys}))
}

/// RFC 7662: requires HTTP Basic `mcp-server:s3cret`, answers the registered answer of the
/// token (inactive when unknown).
async fn introspect(req: HttpRequest, body: web::Bytes, state: web::Data<AsState>) -> HttpResponse {
    state.introspection_hits.fetch_add(1, Ordering::SeqCst);
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("mcp-server:s3cret")
    );
    let authorized = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        == Some(expected.as_str());
    if !authorized {
        return HttpResponse::Unauthorized().json(json!({"error": "invalid_client"}));
    }
    let token = url::form_urlencoded::parse(&body)
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    let answer = state
        .introspection
        .lock()
        .unwrap()
        .get(&token)
        .cloned()
        .unwrap_or_else(|| json!({"active": false}));
    HttpResponse::Ok().json(answer)
}

// ---------------------------------------------------------------------------------------------
// The MCP server.

/// Counts handler runs: a refused request must never reach one.
#[derive(Default)]
struct Runs(AtomicUsize);

/// What a handler saw of its caller, as JSON text.
fn describe(cx: &RequestContext) -> String {
    if let Some(runs) = cx.state::<Runs>() {
        runs.0.fetch_add(1, Ordering::SeqCst);
    }
    let identity = cx.identity();
    let headers = cx.http_headers();
    json!({
        "subject": identity.and_then(|i| i.subject()),
        "scopes": identity.map(|i| i.scopes().to_vec()),
        "client": identity.and_then(|i| i.client_id()),
        "tenant": identity.and_then(|i| i.claim("tenant")),
        "sawAuthorization": headers.map(|h| h.contains_key("authorization")),
        "trace": headers
            .and_then(|h| h.get("x-trace"))
            .and_then(|v| v.to_str().ok()),
    })
    .to_string()
}

fn server(runs: Arc<Runs>) -> Server {
    Server::builder("auth-test", "1.0.0")
        .state_arc(runs)
        .required_scopes(["mcp"])
        .tool(tool(
            "whoami",
            "Describes the caller",
            |cx: RequestContext| async move { describe(&cx) },
        ))
        .tool(
            tool("write", "Writes files", |cx: RequestContext| async move {
                describe(&cx)
            })
            .required_scopes(["files:write"]),
        )
        .prompt(
            prompt(
                "secret",
                "A guarded prompt",
                |cx: RequestContext| async move { PromptMessage::user_text(describe(&cx)) },
            )
            .required_scopes(["prompts:secret"]),
        )
        .resource(
            resource(
                Resource::new("file:///vault.txt", "vault"),
                |cx: RequestContext| async move { describe(&cx) },
            )
            .required_scopes(["vault:read"]),
        )
        .custom_method("whoami/custom", |cx: RequestContext| async move {
            json!({"who": describe(&cx)})
        })
        .tasks(actix_mcp::TaskConfig::default())
        .tool(
            tool(
                "job",
                "Runs until cancelled",
                |cx: RequestContext| async move {
                    cx.cancelled().await;
                    "cancelled"
                },
            )
            .task_support(actix_mcp::protocol::TaskSupport::Optional),
        )
        .tool(tool(
            "confirm",
            "Asks the caller to confirm",
            |cx: RequestContext| async move {
                match cx.input_response("ok") {
                    Some(_) => Ok(describe(&cx)),
                    None => {
                        let schema = serde_json::from_value(json!({
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                        }))
                        .unwrap();
                        Err(McpError::input_required(
                            actix_mcp::protocol::InputRequiredResult::ask(
                                "ok",
                                actix_mcp::protocol::InputRequest::elicitation(
                                    &actix_mcp::protocol::ElicitRequestParams::form(
                                        "Sure?", schema,
                                    ),
                                ),
                            )
                            .with_state("asked"),
                        ))
                    }
                }
            },
        ))
        .build()
        .unwrap()
}

struct McpServer {
    /// `http://127.0.0.1:<port>/mcp`: the endpoint and the resource (the tokens' audience).
    url: String,
    origin: String,
    metadata_url: String,
    runs: Arc<Runs>,
    handle: ServerHandle,
    http: reqwest::Client,
}

impl McpServer {
    /// Serves the test server at `http://127.0.0.1:<port>/mcp`, protected by the validator
    /// `validator` builds for the endpoint's URL (its audience).
    fn start<V: TokenValidator>(validator: impl FnOnce(&str) -> V, issuer: &str) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let origin = format!("http://127.0.0.1:{port}");
        let url = format!("{origin}/mcp");
        let auth = BearerAuth::builder(&url, validator(&url))
            .authorization_server(issuer)
            .metadata("resource_name", "auth test")
            .build()
            .unwrap();
        let metadata_url = auth.metadata_url().to_owned();
        let runs = Arc::new(Runs::default());
        let mcp: McpHttp = server(runs.clone()).http("/mcp").bearer_auth(auth);
        let server =
            actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
                .workers(1)
                .disable_signals()
                .shutdown_timeout(1)
                .listen(listener)
                .unwrap()
                .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Self {
            url,
            origin,
            metadata_url,
            runs,
            handle,
            http: http_client(),
        }
    }

    /// How many handlers have run.
    fn runs(&self) -> usize {
        self.runs.0.load(Ordering::SeqCst)
    }

    /// A POST of `body` with the given token (and session, for 2025 requests).
    fn post(
        &self,
        body: &Value,
        token: Option<&str>,
        session: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .header("x-trace", "trace-42")
            .body(body.to_string());
        if let Some(token) = token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(session) = session {
            builder = builder
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", SESSION_VERSION);
        }
        builder
    }

    /// A 2026-07-28 request, with its `_meta` envelope and standard headers.
    fn modern(
        &self,
        id: i64,
        method: &str,
        params: Value,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}},
                "elicitation": {},
            },
            "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1.0.0"},
        });
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str().map(str::to_owned),
            "resources/read" => params["uri"].as_str().map(str::to_owned),
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                params["taskId"].as_str().map(str::to_owned)
            }
            _ => None,
        };
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut builder = self
            .post(&body, token, None)
            .header("MCP-Protocol-Version", MODERN)
            .header("Mcp-Method", method);
        if let Some(name) = name {
            builder = builder.header("Mcp-Name", name);
        }
        builder
    }

    /// `initialize` + `notifications/initialized` with `token`; the session id.
    async fn open_session(&self, token: &str) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": SESSION_VERSION, "capabilities": {},
            "clientInfo": {"name": "auth-test", "version": "1.0.0"}}});
        let response = send(self.post(&body, Some(token), None)).await;
        assert_eq!(response.status(), StatusCode::OK);
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let (_, message) = read(response).await;
        assert!(message.get("result").is_some(), "{message}");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = send(self.post(&initialized, Some(token), Some(&session))).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        session
    }

    fn get(&self, token: Option<&str>, session: &str) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .get(&self.url)
            .header(ACCEPT, "text/event-stream")
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", SESSION_VERSION);
        if let Some(token) = token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        builder
    }

    fn delete(&self, token: Option<&str>, session: &str) -> reqwest::RequestBuilder {
        let mut builder = self
            .http
            .delete(&self.url)
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", SESSION_VERSION);
        if let Some(token) = token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        builder
    }

    async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .unwrap();
    }
}

/// The status and the JSON-RPC message of an answer (one JSON body, or the last message of an
/// SSE stream).
async fn read(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = tokio::time::timeout(WAIT, response.text())
        .await
        .unwrap()
        .unwrap();
    let json = if text.starts_with('{') {
        text
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|data| data.starts_with('{'))
            .unwrap_or_else(|| panic!("no message in {text:?}"))
            .to_owned()
    };
    (status, serde_json::from_str(&json).unwrap())
}

/// The parameters of a `Bearer` challenge.
fn challenge(response: &reqwest::Response) -> HashMap<String, String> {
    let value = response
        .headers()
        .get(WWW_AUTHENTICATE)
        .unwrap_or_else(|| panic!("no WWW-Authenticate on {}", response.status()))
        .to_str()
        .unwrap();
    let rest = value
        .strip_prefix("Bearer ")
        .unwrap_or_else(|| panic!("not a Bearer challenge: {value}"));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"").unwrap();
        let end = after.find('"').unwrap();
        params.insert(key.trim().to_owned(), after[..end].to_owned());
        rest = after[end + 1..].trim_start_matches([',', ' ']);
    }
    params
}

/// A token: claims `iss`, `aud`, `sub`, `exp` and `iat` by default, then `extra` (a `null`
/// removes a claim), signed with `key` under key id `kid`.
fn token(key: &str, kid: Option<&str>, issuer: &str, audience: &str, extra: Value) -> String {
    let mut claims = json!({
        "iss": issuer, "aud": audience, "sub": "alice", "client_id": "cli",
        "scope": "mcp", "iat": now(), "exp": now() + 300,
    });
    for (name, value) in extra.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    let (alg, encoding) = signing_key(key);
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
}

/// The authorization server, and an MCP server trusting it through its JWKS (unknown key ids
/// refresh the key set at once).
async fn jwt_setup() -> (AuthServer, McpServer) {
    let auth_server = AuthServer::start(&["rsa-a", "ec-a"]);
    let issuer = auth_server.url.clone();
    let jwks = format!("{issuer}/jwks");
    let mcp = McpServer::start(
        |audience| {
            JwtValidator::builder(&jwks)
                .issuer(&issuer)
                .audience(audience)
                .leeway(Duration::from_secs(5))
                .min_refresh_interval(Duration::ZERO)
                .build()
                .unwrap()
        },
        &auth_server.url,
    );
    (auth_server, mcp)
}

// ---------------------------------------------------------------------------------------------
// Tests.

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
            read(send(mcp.modern(1, "tools/call", call, Some(&token))).await).await;
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
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(json!({"iss": iss, "aud": aud, "sub": "mallory", "scope": "mcp", "exp": now() + 300})
            .to_string()
            .as_bytes())
    );
    let forged_hs256 = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa-a".into());
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
        for modern in [false, true] {
            let request = if modern {
                mcp.modern(
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
            assert_eq!(body["id"], 7, "{what}: {body}");
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
    assert_eq!(body["id"], 7);
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
    let (status, _) = read(send(mcp.modern(1, "tools/call", call.clone(), Some(&old))).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        auth_server.jwks_hits(),
        1,
        "the key set is fetched once and cached"
    );
    // A key the authorization server does not publish yet: one refresh, still unknown.
    let rotated = token("rsa-b", Some("rsa-b"), &iss, &mcp.url, json!({}));
    let response = send(mcp.modern(2, "tools/call", call.clone(), Some(&rotated))).await;
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
        read(send(mcp.modern(3, "tools/call", call.clone(), Some(&rotated))).await).await;
    assert_eq!(status, StatusCode::OK, "{message}");
    assert_eq!(auth_server.jwks_hits(), 3);
    let response = send(mcp.modern(4, "tools/call", call, Some(&old))).await;
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
        let response = send(mcp.modern(9, method, params.clone(), Some(&basic))).await;
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
                "scopes_supported": ["mcp", "files:write", "prompts:secret", "vault:read"],
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
            read(send(mcp.modern(id, "tools/call", call.clone(), Some("opaque-carol"))).await)
                .await;
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
        let response = send(mcp.modern(3, "tools/call", call.clone(), Some(bad))).await;
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
    let (status, created) = read(send(mcp.modern(1, "tools/call", call, Some(&alice))).await).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();

    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let mut params = json!({"taskId": task_id});
        if method == "tasks/update" {
            params["inputResponses"] = json!({});
        }
        let (_, answer) = read(send(mcp.modern(2, method, params, Some(&bob))).await).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    let (_, task) =
        read(send(mcp.modern(3, "tasks/get", json!({"taskId": task_id}), Some(&alice))).await)
            .await;
    assert_eq!(
        task["result"]["status"], "working",
        "bob's cancel did nothing: {task}"
    );
    let (_, cancelled) =
        read(send(mcp.modern(4, "tasks/cancel", json!({"taskId": task_id}), Some(&alice))).await)
            .await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");

    // The state alice got back cannot be replayed by bob.
    let ask = json!({"name": "confirm", "arguments": {}});
    let (_, asked) = read(send(mcp.modern(5, "tools/call", ask.clone(), Some(&alice))).await).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let mut retry = ask.clone();
    retry["inputResponses"] = json!({"ok": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(state);
    let (_, stolen) =
        read(send(mcp.modern(6, "tools/call", retry.clone(), Some(&bob))).await).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    let (_, done) = read(send(mcp.modern(7, "tools/call", retry, Some(&alice))).await).await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"subject\":\"alice\""), "{done}");
    mcp.stop().await;
}
