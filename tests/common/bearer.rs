//! A bearer-protected MCP endpoint on `127.0.0.1:0` and a tiny authorization server in process,
//! for the server-side authorization tests (`tests/server_auth.rs`,
//! `tests/server_auth_hardening.rs`).
//!
//! [`AuthServer`] publishes a JWKS the tests change and answers RFC 7662 introspection from the
//! answers they register (counting calls, optionally slowly, with the peak of calls in flight).
//! [`McpServer`] serves a test server whose tools describe their caller, behind `bearer_auth`
//! with the validator a test builds. Tokens are minted with the committed test keys of
//! `tests/fixtures/auth/` (RS256 and ES256) by [`token`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::server::auth::{BearerAuth, JwtValidator, TokenValidator};
use actix_mcp::transport::http::McpHttp;
use actix_web::dev::ServerHandle;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use serde_json::{Value, json};

use super::WAIT;
use super::http::{http_client, send};

/// The committed test keys.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/auth");
/// The stateless protocol revision.
pub const V2026: &str = "2026-07-28";
/// The session-era protocol revision.
pub const SESSION_VERSION: &str = "2025-11-25";

/// The bytes of a file of [`FIXTURES`].
pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

/// The public JWKs of the test keys, by key id.
pub fn jwk(kid: &str) -> Value {
    let all: Value = serde_json::from_slice(&fixture("jwks.json")).unwrap();
    all[kid].clone()
}

/// A test signing key: `rsa-a`, `rsa-b` (RS256), `ec-a`, `ec-rogue` (ES256).
pub fn signing_key(name: &str) -> (Algorithm, EncodingKey) {
    let pem = fixture(&format!("{name}.pem"));
    if name.starts_with("rsa") {
        (Algorithm::RS256, EncodingKey::from_rsa_pem(&pem).unwrap())
    } else {
        (Algorithm::ES256, EncodingKey::from_ec_pem(&pem).unwrap())
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// Base64url without padding.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

// ---------------------------------------------------------------------------------------------
// The authorization server: a JWKS and an introspection endpoint.

#[derive(Default)]
pub struct AsState {
    pub jwks: Mutex<Vec<Value>>,
    pub jwks_hits: AtomicUsize,
    /// Introspection answers by token.
    pub introspection: Mutex<HashMap<String, Value>>,
    pub introspection_hits: AtomicUsize,
    /// How long each introspection answer takes.
    pub introspection_delay: Mutex<Duration>,
    /// Introspection calls being answered now, and the most there ever were at once.
    pub introspection_in_flight: AtomicUsize,
    pub introspection_peak: AtomicUsize,
}

pub struct AuthServer {
    /// `http://127.0.0.1:<port>`: the issuer, and the base of the JWKS and introspection URLs.
    pub url: String,
    pub state: Arc<AsState>,
    handle: ServerHandle,
}

impl AuthServer {
    pub fn start(keys: &[&str]) -> Self {
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

    pub fn set_keys(&self, keys: &[&str]) {
        *self.state.jwks.lock().unwrap() = keys.iter().map(|k| jwk(k)).collect();
    }

    /// Publishes exactly these JWKs.
    pub fn set_jwks(&self, keys: Vec<Value>) {
        *self.state.jwks.lock().unwrap() = keys;
    }

    /// Registers the introspection answer of `token`.
    pub fn answer(&self, token: &str, answer: Value) {
        self.state
            .introspection
            .lock()
            .unwrap()
            .insert(token.to_owned(), answer);
    }

    /// Every introspection answer takes `delay` from now on.
    pub fn slow_introspection(&self, delay: Duration) {
        *self.state.introspection_delay.lock().unwrap() = delay;
    }

    /// How many introspection calls were made.
    pub fn introspection_hits(&self) -> usize {
        self.state.introspection_hits.load(Ordering::SeqCst)
    }

    /// The most introspection calls that were in flight at once.
    pub fn introspection_peak(&self) -> usize {
        self.state.introspection_peak.load(Ordering::SeqCst)
    }

    pub fn jwks_hits(&self) -> usize {
        self.state.jwks_hits.load(Ordering::SeqCst)
    }

    pub fn jwt_validator(&self, audience: &str) -> actix_mcp::server::auth::JwtValidatorBuilder {
        JwtValidator::builder(format!("{}/jwks", self.url))
            .issuer(&self.url)
            .audience(audience)
            .leeway(Duration::from_secs(5))
    }

    pub async fn stop(self) {
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
    let now_in_flight = state.introspection_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state
        .introspection_peak
        .fetch_max(now_in_flight, Ordering::SeqCst);
    let delay = *state.introspection_delay.lock().unwrap();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let response = answer_introspection(&req, &body, &state);
    state.introspection_in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

fn answer_introspection(req: &HttpRequest, body: &[u8], state: &AsState) -> HttpResponse {
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
    let token = url::form_urlencoded::parse(body)
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
pub struct Runs(AtomicUsize);

/// What a handler saw of its caller, as JSON text.
pub fn describe(cx: &RequestContext) -> String {
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

/// The test server: every request needs `mcp`; `write`, `secret`, the vault resource and the
/// `file:///notes/{name}` template need more; `job` becomes a task, `confirm` asks for input.
pub fn server(runs: Arc<Runs>) -> Server {
    Server::builder("auth-test", "1.0.0")
        .state_arc(runs)
        .required_scopes(["mcp"])
        .tool(
            ToolDef::new("whoami", |cx: RequestContext| async move { describe(&cx) })
                .description("Describes the caller"),
        )
        .tool(
            ToolDef::new("write", |cx: RequestContext| async move { describe(&cx) })
                .description("Writes files")
                .required_scopes(["files:write"]),
        )
        .prompt(
            PromptDef::new("secret", |cx: RequestContext| async move {
                PromptMessage::user_text(describe(&cx))
            })
            .description("A guarded prompt")
            .required_scopes(["prompts:secret"]),
        )
        .resource(
            ResourceDef::new(
                "file:///vault.txt",
                "vault",
                |cx: RequestContext| async move { describe(&cx) },
            )
            .required_scopes(["vault:read"]),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "file:///notes/{name}",
                "notes",
                |cx: RequestContext| async move { describe(&cx) },
            )
            .required_scopes(["notes:read"]),
        )
        .custom_method("whoami/custom", |cx: RequestContext| async move {
            json!({"who": describe(&cx)})
        })
        .tasks(actix_mcp::TaskConfig::default())
        .tool(
            ToolDef::new("job", |cx: RequestContext| async move {
                cx.cancelled().await;
                "cancelled"
            })
            .description("Runs until cancelled")
            .task_support(actix_mcp::protocol::TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("confirm", |cx: RequestContext| async move {
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
            })
            .description("Asks the caller to confirm"),
        )
        .build()
        .unwrap()
}

pub struct McpServer {
    /// `http://127.0.0.1:<port>/mcp`: the endpoint and the resource (the tokens' audience).
    pub url: String,
    /// `http://127.0.0.1:<port>`.
    pub origin: String,
    /// The protected resource metadata URL its challenges name.
    pub metadata_url: String,
    runs: Arc<Runs>,
    handle: ServerHandle,
    pub http: reqwest::Client,
}

impl McpServer {
    /// Serves the test server at `http://127.0.0.1:<port>/mcp`, protected by the validator
    /// `validator` builds for the endpoint's URL (its audience).
    pub fn start<V: TokenValidator>(validator: impl FnOnce(&str) -> V, issuer: &str) -> Self {
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
        let mcp: McpHttp = server(runs.clone())
            .http("/mcp")
            .bearer_auth(auth)
            .build()
            .unwrap();
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
    pub fn runs(&self) -> usize {
        self.runs.0.load(Ordering::SeqCst)
    }

    /// A POST of `body` with the given token (and session, for 2025 requests).
    pub fn post(
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
    pub fn v2026(
        &self,
        id: i64,
        method: &str,
        params: Value,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": V2026,
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
            .header("MCP-Protocol-Version", V2026)
            .header("Mcp-Method", method);
        if let Some(name) = name {
            builder = builder.header("Mcp-Name", name);
        }
        builder
    }

    /// `initialize` + `notifications/initialized` with `token`; the session id.
    pub async fn open_session(&self, token: &str) -> String {
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

    pub fn get(&self, token: Option<&str>, session: &str) -> reqwest::RequestBuilder {
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

    pub fn delete(&self, token: Option<&str>, session: &str) -> reqwest::RequestBuilder {
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

    pub async fn stop(self) {
        tokio::time::timeout(WAIT, self.handle.stop(true))
            .await
            .unwrap();
    }
}

/// The status and the JSON-RPC message of an answer (one JSON body, or the last message of an
/// SSE stream).
pub async fn read(response: reqwest::Response) -> (StatusCode, Value) {
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
pub fn challenge(response: &reqwest::Response) -> HashMap<String, String> {
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

/// A token: claims `iss`, `aud`, `sub`, `client_id`, `scope`, `exp` and `iat` by default, then
/// `extra` (a `null` removes a claim), signed with `key` under key id `kid`, typed `at+jwt`
/// (RFC 9068).
pub fn token(key: &str, kid: Option<&str>, issuer: &str, audience: &str, extra: Value) -> String {
    token_typed(key, kid, Some("at+jwt"), issuer, audience, extra)
}

/// A token like [`token`] whose JOSE header has the `typ` given (none for `None`).
pub fn token_typed(
    key: &str,
    kid: Option<&str>,
    typ: Option<&str>,
    issuer: &str,
    audience: &str,
    extra: Value,
) -> String {
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
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, &claims, &encoding).unwrap()
}

/// The authorization server, and an MCP server trusting it through its JWKS (unknown key ids
/// refresh the key set at once).
pub async fn jwt_setup() -> (AuthServer, McpServer) {
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
