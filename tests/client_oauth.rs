//! The OAuth client against a small in-test authorization server and protected MCP server
//! (one actix-web app on `127.0.0.1:0`): challenge parsing, the discovery order, the issuer and
//! resource checks, RFC 9207 `iss` checks, scope selection and step-up, PKCE, the choice of
//! registration, token endpoint authentication and refresh; the extensions' grants (client
//! credentials with a secret or `private_key_jwt`, workload identity, enterprise-managed
//! authorization through an identity provider on the same app), DPoP with nonces on both
//! sides, and the user's time not counting against request timeouts. The mock records every
//! request, so each test checks the wire; every wait is bounded.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_mcp::client::auth::{
    Algorithm, AuthError, Authorizer, BearerChallenge, Challenge, ClientCredential,
    ClientCredentials, ClientRegistration, DpopKey, HeadlessAuthorizer, IdentityProvider, Jwk,
    OAuth, OAuthBuilder, SigningKey, TokenEndpointAuth, authorization_server_metadata_urls,
    authorize_with, protected_resource_metadata_urls, token_with,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientBuilder, ClientError, Lifecycle};
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
    /// `grant_types_supported`, when not the default (`authorization_code`, `refresh_token`).
    grants: Option<Vec<&'static str>>,
    /// `dpop_signing_alg_values_supported`; when set, the MCP server also challenges with the
    /// `DPoP` scheme.
    dpop_algs: Option<Vec<&'static str>>,
    /// The nonce the token endpoint demands in DPoP proofs.
    as_nonce: Option<&'static str>,
    /// The nonce the MCP server demands in DPoP proofs.
    rs_nonce: Option<&'static str>,
    /// The public key of the `private_key_jwt` client: client credentials requests must carry
    /// an assertion it verifies.
    client_jwk: Option<Jwk>,
    /// What the identity provider says it issued.
    idp_issued_type: &'static str,
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
            grants: None,
            dpop_algs: None,
            as_nonce: None,
            rs_nonce: None,
            client_jwk: None,
            idp_issued_type: ID_JAG,
        }
    }
}

const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

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
    /// Every DPoP proof received (`token` or `mcp`), with its claims, in order.
    proofs: Vec<(&'static str, Value)>,
    /// The `Authorization` header of every request to the MCP server that had one.
    mcp_authorizations: Vec<String>,
    /// The key thumbprint each DPoP-bound token is bound to.
    bound: HashMap<String, String>,
    /// The form of every request to the identity provider's token endpoint.
    idp_requests: Vec<HashMap<String, String>>,
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

    fn proofs(&self) -> Vec<(&'static str, Value)> {
        self.state.seen.lock().unwrap().proofs.clone()
    }

    fn mcp_authorizations(&self) -> Vec<String> {
        self.state.seen.lock().unwrap().mcp_authorizations.clone()
    }

    fn idp_requests(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().idp_requests.clone()
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
    let scheme = if state.config.dpop_algs.is_some() {
        "DPoP"
    } else {
        "Bearer"
    };
    let mut value = format!("{scheme} error=\"{error}\"");
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
    let scopes = match authorized(&req, &state) {
        Ok(scopes) => scopes,
        Err(refusal) => return *refusal,
    };
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

/// The base64url SHA-256 of `text`.
fn sha256_b64(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(text.as_bytes()))
}

/// Checks a DPoP proof for a `method` request to `url` (with `ath` for `token`): its claims
/// and the thumbprint of its key.
fn check_proof(
    proof: &str,
    method: &str,
    url: &str,
    token: Option<&str>,
) -> Result<(Value, String), String> {
    use jsonwebtoken::jwk::ThumbprintHash;
    let header = jsonwebtoken::decode_header(proof).map_err(|e| e.to_string())?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err("typ".into());
    }
    let jwk = header.jwk.ok_or("no jwk")?;
    if serde_json::to_value(&jwk).unwrap().get("d").is_some() {
        return Err("private key in the proof".into());
    }
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map_err(|e| e.to_string())?
        .claims;
    if claims["htm"] != method || claims["htu"] != url || !claims["jti"].is_string() {
        return Err(format!("htm, htu or jti: {claims}"));
    }
    let iat = claims["iat"].as_u64().ok_or("no iat")?;
    if iat.abs_diff(jsonwebtoken::get_current_timestamp()) > 60 {
        return Err("iat".into());
    }
    if claims.get("ath").and_then(Value::as_str) != token.map(sha256_b64).as_deref() {
        return Err("ath".into());
    }
    let thumbprint = jwk
        .thumbprint(ThumbprintHash::SHA256)
        .map_err(|e| e.to_string())?;
    Ok((claims, thumbprint))
}

/// The scopes of the request's token, `Ok(None)` without a usable one; `Err` with the answer
/// for a DPoP nonce demand or a bad proof.
fn authorized(req: &HttpRequest, state: &State) -> Result<Option<Vec<String>>, Box<HttpResponse>> {
    let header_of = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let Some(authorization) = header_of("authorization") else {
        return Ok(None);
    };
    let mut seen = state.seen.lock().unwrap();
    seen.mcp_authorizations.push(authorization.clone());
    let (scheme, token) = authorization.split_once(' ').unwrap_or_default();
    let bound = seen.bound.get(token).cloned();
    match (scheme, bound) {
        ("Bearer", None) => Ok(seen.tokens.get(token).cloned()),
        ("DPoP", Some(jkt)) => {
            let url = format!("{}/mcp", state.base);
            let proof = header_of("dpop").unwrap_or_default();
            let (claims, thumbprint) =
                check_proof(&proof, req.method().as_str(), &url, Some(token)).map_err(|error| {
                    Box::new(HttpResponse::BadRequest().json(json!({"error": error})))
                })?;
            seen.proofs.push(("mcp", claims.clone()));
            if thumbprint != jkt {
                return Ok(None);
            }
            if let Some(nonce) = state.config.rs_nonce
                && claims["nonce"] != nonce
            {
                return Err(Box::new(
                    HttpResponse::Unauthorized()
                        .insert_header((header::WWW_AUTHENTICATE, r#"DPoP error="use_dpop_nonce""#))
                        .insert_header(("DPoP-Nonce", nonce))
                        .json(json!({"error": "use_dpop_nonce"})),
                ));
            }
            Ok(seen.tokens.get(token).cloned())
        }
        // A bound token as a bearer one, or an unknown scheme.
        _ => Ok(None),
    }
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
        "grant_types_supported": config
            .grants
            .clone()
            .unwrap_or_else(|| vec!["authorization_code", "refresh_token"]),
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
    if let Some(algs) = &config.dpop_algs {
        metadata["dpop_signing_alg_values_supported"] = json!(algs);
    }
    HttpResponse::Ok().json(metadata)
}

/// The identity provider's metadata (RFC 8414, path insertion).
async fn idp_metadata(state: web::Data<State>) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "issuer": format!("{}/idp", state.base),
        "token_endpoint": format!("{}/idp/token", state.base),
        "grant_types_supported": [TOKEN_EXCHANGE],
    }))
}

/// The identity provider's token endpoint: the ID token `id-token-ok` for an ID-JAG
/// (`jag:<audience>|<resource>`).
async fn idp_token(body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let form = query_map(std::str::from_utf8(&body).unwrap_or_default());
    state.seen.lock().unwrap().idp_requests.push(form.clone());
    let field = |name: &str| form.get(name).map(String::as_str);
    if field("grant_type") != Some(TOKEN_EXCHANGE)
        || field("requested_token_type") != Some(ID_JAG)
        || field("subject_token_type") != Some("urn:ietf:params:oauth:token-type:id_token")
    {
        return HttpResponse::BadRequest().json(json!({"error": "invalid_request"}));
    }
    if field("subject_token") != Some("id-token-ok") {
        return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}));
    }
    let jag = format!(
        "jag:{}|{}",
        field("audience").unwrap_or_default(),
        field("resource").unwrap_or_default()
    );
    HttpResponse::Ok().json(json!({
        "access_token": jag,
        "issued_token_type": state.config.idp_issued_type,
        "token_type": "N_A",
    }))
}

/// Whether the token request authenticates a confidential client: a private key assertion
/// the configured key verifies (for the issuer), else a secret.
fn client_authenticated(form: &HashMap<String, String>, state: &State) -> bool {
    let Some(jwk) = &state.config.client_jwk else {
        return form.contains_key("authorization") || form.contains_key("client_secret");
    };
    if form.get("client_assertion_type").map(String::as_str) != Some(ASSERTION_TYPE) {
        return false;
    }
    let assertion = form.get("client_assertion").cloned().unwrap_or_default();
    let Ok(header) = jsonwebtoken::decode_header(&assertion) else {
        return false;
    };
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_audience(&[state.issuer()]);
    validation.set_issuer(&["svc"]);
    validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
    jsonwebtoken::decode::<Value>(
        &assertion,
        &jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap(),
        &validation,
    )
    .is_ok_and(|data| data.claims["sub"] == "svc" && data.claims["jti"].is_string())
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
    let mut jkt = None;
    if let Some(proof) = req.headers().get("dpop").and_then(|v| v.to_str().ok()) {
        let url = format!("{}/token", state.issuer());
        let (claims, thumbprint) = match check_proof(proof, "POST", &url, None) {
            Ok(checked) => checked,
            Err(error) => {
                return HttpResponse::BadRequest()
                    .json(json!({"error": "invalid_dpop_proof", "error_description": error}));
            }
        };
        seen.proofs.push(("token", claims.clone()));
        if let Some(nonce) = state.config.as_nonce
            && claims["nonce"] != nonce
        {
            return HttpResponse::BadRequest()
                .insert_header(("DPoP-Nonce", nonce))
                .json(json!({"error": "use_dpop_nonce"}));
        }
        jkt = Some(thumbprint);
    }
    let scopes = match form.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {
            if !client_authenticated(&form, &state) {
                return HttpResponse::Unauthorized().json(json!({"error": "invalid_client"}));
            }
            form.get("scope").cloned().unwrap_or_default()
        }
        Some(JWT_BEARER) => {
            let assertion = form.get("assertion").cloned().unwrap_or_default();
            let expected_jag = format!("jag:{}|{}/mcp", state.issuer(), state.base);
            let ok = assertion == "workload-ok"
                || (assertion == expected_jag && form.contains_key("authorization"));
            if !ok {
                return HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}));
            }
            form.get("scope").cloned().unwrap_or_default()
        }
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
    let token_type = match jkt {
        Some(jkt) => {
            seen.bound.insert(access.clone(), jkt);
            "DPoP"
        }
        None => "Bearer",
    };
    let mut answer = json!({"access_token": access, "token_type": token_type, "expires_in": 3600});
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
            .route(&format!("{prefix}/register"), web::post().to(register))
            .route(
                "/.well-known/oauth-authorization-server/idp",
                web::get().to(idp_metadata),
            )
            .route("/idp/token", web::post().to(idp_token));
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
    tokio::time::timeout(WAIT, work)
        .await
        .expect("done in time")
}

#[actix_web::test]
async fn a_user_slower_than_the_request_timeout_does_not_fail_the_request() {
    for lifecycle in [Lifecycle::Legacy, Lifecycle::Auto] {
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
    let builder = Client::builder("oauth-test", "1.0.0").lifecycle(Lifecycle::Legacy);
    let error = match connect_with(&mock, builder, oauth).await {
        Err(ClientError::Auth(error)) => error,
        other => panic!("expected an authorization error, got {other:?}"),
    };
    assert!(matches!(error, AuthError::Authorizer(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(mock.token_requests().is_empty());
    mock.stop().await;
}

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
    let mut command = tokio::process::Command::new(example_binary("client"));
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
    let output = tokio::time::timeout(WAIT, command.output())
        .await
        .expect("the client finished in time")
        .unwrap();
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
