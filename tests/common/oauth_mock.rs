//! A small authorization server and protected MCP server for the OAuth client tests, one
//! actix-web app on `127.0.0.1:0` ([`start`]): protected resource metadata, authorization server
//! metadata, authorization, token, registration and an identity provider's endpoints, DPoP
//! proofs checked with nonces on both sides, each behaving as a [`Config`] says. It records
//! every request ([`Seen`]), so each test checks the wire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_mcp::client::auth::{AuthError, HeadlessAuthorizer, Jwk, OAuth, OAuthBuilder};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{Client, ClientError, Lifecycle};
use actix_web::dev::ServerHandle;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::{WAIT, within, within_for};

/// The redirect URI every authorization-code client registers.
pub const REDIRECT: &str = "http://127.0.0.1:9/callback";

/// What the mock authorization server puts in the redirect's `iss`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Iss {
    Correct,
    Missing,
    Wrong,
    TrailingSlash,
}

/// The `resource` the protected resource metadata publishes.
#[derive(Debug, Clone)]
pub enum Resource {
    /// The MCP endpoint's URL.
    Endpoint,
    /// The bare origin, without a trailing slash.
    Origin,
    /// Another URL.
    Other(&'static str),
}

/// How the mock behaves.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the protected resource metadata is served (`None`: nowhere).
    pub prm_path: Option<&'static str>,
    /// Whether the 401 challenge links to it.
    pub prm_in_header: bool,
    /// Its `resource`.
    pub prm_resource: Resource,
    /// The challenge's `resource_metadata`, when not the real one.
    pub prm_link: Option<&'static str>,
    pub prm_scopes: Option<Vec<&'static str>>,
    /// The scope of the 401 challenge.
    pub challenge_scope: Option<&'static str>,
    /// The issuer's path (`""` or `/tenant1`).
    pub as_prefix: &'static str,
    /// Where the authorization server metadata is served.
    pub as_metadata_path: &'static str,
    /// Its `issuer`, when not the real one.
    pub issuer_override: Option<String>,
    pub iss: Iss,
    pub iss_advertised: bool,
    pub pkce: bool,
    pub cimd: bool,
    pub dcr: bool,
    pub auth_methods: Option<Vec<&'static str>>,
    pub as_scopes: Option<Vec<&'static str>>,
    /// `tools/call` needs this scope (else 403 insufficient_scope).
    pub call_scope: Option<&'static str>,
    /// Tokens expire at once and come with refresh tokens.
    pub short_lived: bool,
    /// Tokens are granted no scope, whatever was asked.
    pub grant_nothing: bool,
    /// Scopes every token is granted beyond those asked for (the authorization server's
    /// defaults), named in the token response's `scope`.
    pub default_scope: Option<&'static str>,
    /// `grant_types_supported`, when not the default (`authorization_code`, `refresh_token`).
    pub grants: Option<Vec<&'static str>>,
    /// `dpop_signing_alg_values_supported`; when set, the MCP server also challenges with the
    /// `DPoP` scheme.
    pub dpop_algs: Option<Vec<&'static str>>,
    /// The nonce the token endpoint demands in DPoP proofs.
    pub as_nonce: Option<&'static str>,
    /// The nonce the MCP server demands in DPoP proofs.
    pub rs_nonce: Option<&'static str>,
    /// The public key of the `private_key_jwt` client: client credentials requests must carry
    /// an assertion it verifies.
    pub client_jwk: Option<Jwk>,
    /// What the identity provider says it issued.
    pub idp_issued_type: &'static str,
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
            default_scope: None,
            grants: None,
            dpop_algs: None,
            as_nonce: None,
            rs_nonce: None,
            client_jwk: None,
            idp_issued_type: ID_JAG,
        }
    }
}

pub const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// What the mock saw and issued.
#[derive(Debug, Default)]
pub struct Seen {
    /// `METHOD path` of every request, in order.
    pub requests: Vec<String>,
    /// The query of every authorization request.
    pub authorizations: Vec<HashMap<String, String>>,
    /// The form of every token request, with `authorization` (the header) added.
    pub token_requests: Vec<HashMap<String, String>>,
    /// The body of every registration request.
    pub registrations: Vec<Value>,
    /// The PKCE challenge of each code.
    pub challenges: HashMap<String, String>,
    /// The scopes of each issued access token.
    pub tokens: HashMap<String, Vec<String>>,
    /// Whether every code verifier matched its challenge.
    pub pkce_failures: usize,
    pub counter: usize,
    /// Every DPoP proof received (`token` or `mcp`), with its claims, in order.
    pub proofs: Vec<(&'static str, Value)>,
    /// The `Authorization` header of every request to the MCP server that had one.
    pub mcp_authorizations: Vec<String>,
    /// The key thumbprint each DPoP-bound token is bound to.
    pub bound: HashMap<String, String>,
    /// The form of every request to the identity provider's token endpoint.
    pub idp_requests: Vec<HashMap<String, String>>,
}

pub struct State {
    pub config: Config,
    pub base: String,
    pub seen: Mutex<Seen>,
}

impl State {
    pub fn issuer(&self) -> String {
        format!("{}{}", self.base, self.config.as_prefix)
    }
}

pub struct Mock {
    pub base: String,
    pub state: Arc<State>,
    pub handle: ServerHandle,
}

impl Mock {
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn requests(&self) -> Vec<String> {
        self.state.seen.lock().unwrap().requests.clone()
    }

    pub fn authorizations(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().authorizations.clone()
    }

    pub fn token_requests(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().token_requests.clone()
    }

    pub fn registrations(&self) -> Vec<Value> {
        self.state.seen.lock().unwrap().registrations.clone()
    }

    pub fn proofs(&self) -> Vec<(&'static str, Value)> {
        self.state.seen.lock().unwrap().proofs.clone()
    }

    pub fn mcp_authorizations(&self) -> Vec<String> {
        self.state.seen.lock().unwrap().mcp_authorizations.clone()
    }

    pub fn idp_requests(&self) -> Vec<HashMap<String, String>> {
        self.state.seen.lock().unwrap().idp_requests.clone()
    }

    pub fn saw(&self, request: &str) -> bool {
        self.requests().iter().any(|r| r == request)
    }

    pub async fn stop(self) {
        within(self.handle.stop(true)).await;
    }
}

pub fn query_map(query: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

pub fn challenge_header(state: &State, error: &str, scope: Option<&str>) -> String {
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

pub async fn mcp(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
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
pub fn sha256_b64(text: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(text.as_bytes()))
}

/// Checks a DPoP proof for a `method` request to `url` (with `ath` for `token`): its claims
/// and the thumbprint of its key.
pub fn check_proof(
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
pub fn authorized(
    req: &HttpRequest,
    state: &State,
) -> Result<Option<Vec<String>>, Box<HttpResponse>> {
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

pub async fn prm(state: web::Data<State>) -> HttpResponse {
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

pub async fn as_metadata(state: web::Data<State>) -> HttpResponse {
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
pub async fn idp_metadata(state: web::Data<State>) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "issuer": format!("{}/idp", state.base),
        "token_endpoint": format!("{}/idp/token", state.base),
        "grant_types_supported": [TOKEN_EXCHANGE],
    }))
}

/// The identity provider's token endpoint: the ID token `id-token-ok` for an ID-JAG
/// (`jag:<audience>|<resource>`).
pub async fn idp_token(body: web::Bytes, state: web::Data<State>) -> HttpResponse {
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
pub fn client_authenticated(form: &HashMap<String, String>, state: &State) -> bool {
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

pub async fn authorize(req: HttpRequest, state: web::Data<State>) -> HttpResponse {
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

pub async fn token(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
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
    let scopes = match state.config.default_scope {
        Some(extra) => format!("{scopes} {extra}").trim().to_owned(),
        None => scopes,
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
    if state.config.default_scope.is_some() {
        answer["scope"] = json!(scopes);
    }
    if state.config.short_lived {
        answer["expires_in"] = json!(1);
        answer["refresh_token"] = json!(format!("refresh-for:{scopes}"));
    }
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(answer)
}

pub async fn register(body: web::Json<Value>, state: web::Data<State>) -> HttpResponse {
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
pub fn start(config: Config) -> Mock {
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

pub fn oauth() -> OAuthBuilder {
    OAuth::authorization_code(REDIRECT, HeadlessAuthorizer::new()).client_name("oauth-test")
}

/// Connects (2025-11-25) with `oauth`, lists the tools and calls one.
pub async fn run(mock: &Mock, oauth: OAuth) -> Result<(), ClientError> {
    let options = HttpOptions::default().get_stream(false).auth(oauth);
    let work = async {
        let client = Client::builder("oauth-test", "1.0.0")
            .lifecycle(Lifecycle::V2025)
            .connect(HttpTransport::with_options(mock.url(), options))
            .await?;
        client.tools().await?;
        client.call_tool("t", json!({})).await?;
        client.close().await;
        Ok(())
    };
    // A whole connection with its authorization: a dozen requests.
    within_for(WAIT * 2, work).await
}

pub fn auth_error(result: Result<(), ClientError>) -> AuthError {
    match result {
        Err(ClientError::Auth(error)) => error,
        other => panic!("expected an authorization error, got {other:?}"),
    }
}

pub fn scope_of(query: &HashMap<String, String>) -> Option<&str> {
    query.get("scope").map(String::as_str)
}
