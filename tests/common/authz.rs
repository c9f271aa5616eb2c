//! A small OAuth 2.1 authorization server on `127.0.0.1:0`, for the end-to-end authorization
//! tests: metadata (RFC 8414), a JWKS, dynamic client registration (RFC 7591), an authorization
//! endpoint that approves at once (a `302` to the redirect URI with `code`, `state` and `iss`),
//! and a token endpoint for the authorization-code grant (PKCE S256 checked, `resource` kept as
//! the token's audience) and the refresh-token grant. Access tokens are ES256 JWTs signed with
//! the current key; [`AuthServer::rotate_key`] starts signing with a new one.
//!
//! It counts what it was asked ([`AuthServer::counts`]) and remembers the last authorization
//! request's parameters, so a test checks what the client sent, not only that it got through.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::dev::ServerHandle;
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// How the authorization server behaves.
#[derive(Clone, Debug)]
pub struct AuthConfig {
    /// `scopes_supported` in the metadata.
    pub scopes_supported: Vec<String>,
    /// The lifetime of an access token (its `exp`).
    pub token_ttl: Duration,
    /// The `expires_in` the token response announces, when it should differ from
    /// `token_ttl` (a token the server refuses as expired before the client expects it).
    pub announced_ttl: Option<Duration>,
    /// Whether refresh tokens are issued (and `refresh_token` is a supported grant).
    pub refresh_tokens: bool,
    /// The subject of every token.
    pub subject: String,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            scopes_supported: vec![
                "mcp:read".into(),
                "mcp:write".into(),
                "offline_access".into(),
            ],
            token_ttl: Duration::from_secs(300),
            announced_ttl: None,
            refresh_tokens: true,
            subject: "user-1".into(),
        }
    }
}

/// How many requests of each kind the server answered successfully.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `GET` of the metadata document.
    pub metadata: usize,
    /// `GET` of the JWKS.
    pub jwks: usize,
    /// Dynamic registrations.
    pub registrations: usize,
    /// Authorization requests approved.
    pub authorizations: usize,
    /// Codes exchanged for tokens.
    pub code_exchanges: usize,
    /// Refresh-token grants.
    pub refreshes: usize,
}

struct SigningKey {
    kid: String,
    key: EncodingKey,
    public: Jwk,
}

impl SigningKey {
    fn generate(kid: &str) -> Self {
        let rng = aws_lc_rs::rand::SystemRandom::new();
        let pkcs8 = aws_lc_rs::signature::EcdsaKeyPair::generate_pkcs8(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &rng,
        )
        .unwrap();
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        let mut public = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        public.common.key_id = Some(kid.to_owned());
        Self {
            kid: kid.to_owned(),
            key,
            public,
        }
    }
}

/// What one authorization request or code carries.
#[derive(Clone, Debug)]
pub struct Grant {
    /// The registered client.
    pub client_id: String,
    /// The `redirect_uri` of the authorization request.
    pub redirect_uri: String,
    /// The PKCE challenge.
    pub code_challenge: String,
    /// The scopes asked for (space-separated), if any.
    pub scope: Option<String>,
    /// The `resource` indicator (RFC 8707), if any.
    pub resource: Option<String>,
}

#[derive(Clone, Debug)]
struct Registered {
    secret: Option<String>,
    redirect_uris: Vec<String>,
}

struct State {
    issuer: String,
    config: AuthConfig,
    keys: Mutex<Vec<SigningKey>>,
    clients: Mutex<HashMap<String, Registered>>,
    codes: Mutex<HashMap<String, Grant>>,
    refresh: Mutex<HashMap<String, Grant>>,
    counts: Mutex<Counts>,
    last_authorization: Mutex<Option<Grant>>,
}

/// A running authorization server.
pub struct AuthServer {
    /// `http://127.0.0.1:<port>`: the issuer, and the base of every endpoint.
    pub issuer: String,
    state: Arc<State>,
    handle: ServerHandle,
}

impl std::fmt::Debug for AuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthServer")
            .field("issuer", &self.issuer)
            .finish()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn oauth_error(
    status: actix_web::http::StatusCode,
    error: &str,
    description: &str,
) -> HttpResponse {
    HttpResponse::build(status).json(json!({"error": error, "error_description": description}))
}

impl AuthServer {
    /// Starts the server on the current actix system.
    pub fn start(config: AuthConfig) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let issuer = format!("http://127.0.0.1:{port}");
        let state = Arc::new(State {
            issuer: issuer.clone(),
            config,
            keys: Mutex::new(vec![SigningKey::generate("key-1")]),
            clients: Mutex::default(),
            codes: Mutex::default(),
            refresh: Mutex::default(),
            counts: Mutex::default(),
            last_authorization: Mutex::default(),
        });
        let app_state = state.clone();
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(web::Data::from(app_state.clone()))
                .route(
                    "/.well-known/oauth-authorization-server",
                    web::get().to(metadata),
                )
                .route("/jwks", web::get().to(jwks))
                .route("/register", web::post().to(register))
                .route("/authorize", web::get().to(authorize))
                .route("/token", web::post().to(token))
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
            issuer,
            state,
            handle,
        }
    }

    /// The URL of the JWKS.
    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    /// What was asked so far.
    pub fn counts(&self) -> Counts {
        *self.state.counts.lock().unwrap()
    }

    /// The parameters of the last approved authorization request.
    pub fn last_authorization(&self) -> Option<Grant> {
        self.state.last_authorization.lock().unwrap().clone()
    }

    /// Signs with a new key from now on (the JWKS publishes both).
    pub fn rotate_key(&self) {
        let mut keys = self.state.keys.lock().unwrap();
        let kid = format!("key-{}", keys.len() + 1);
        keys.push(SigningKey::generate(&kid));
    }

    /// An access token with these claims (merged over the usual ones: `iss`, `sub`, `iat`,
    /// `exp`), signed with the current key.
    pub fn mint(&self, claims: Value) -> String {
        let mut base = json!({
            "iss": self.issuer,
            "sub": self.state.config.subject,
            "iat": now(),
            "exp": now() + self.state.config.token_ttl.as_secs(),
        });
        if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), claims) {
            base.extend(extra);
        }
        self.state.sign(&base)
    }

    /// Stops the server.
    pub async fn stop(self) {
        let _ = tokio::time::timeout(super::WAIT, self.handle.stop(true)).await;
    }
}

impl State {
    fn sign(&self, claims: &Value) -> String {
        let keys = self.keys.lock().unwrap();
        let key = keys.last().unwrap();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(key.kid.clone());
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &key.key).unwrap()
    }

    fn count(&self, which: impl FnOnce(&mut Counts)) {
        which(&mut self.counts.lock().unwrap());
    }

    /// Issues an access token (and a refresh token when configured) for `grant`.
    fn issue(&self, grant: &Grant) -> HttpResponse {
        let ttl = self.config.token_ttl.as_secs();
        let mut claims = json!({
            "iss": self.issuer,
            "sub": self.config.subject,
            "client_id": grant.client_id,
            "iat": now(),
            "exp": now() + ttl,
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        if let Some(resource) = &grant.resource {
            claims["aud"] = json!(resource);
        }
        if let Some(scope) = &grant.scope {
            claims["scope"] = json!(scope);
        }
        let announced = self.config.announced_ttl.map_or(ttl, |ttl| ttl.as_secs());
        let mut body = json!({
            "access_token": self.sign(&claims),
            "token_type": "Bearer",
            "expires_in": announced,
        });
        if let Some(scope) = &grant.scope {
            body["scope"] = json!(scope);
        }
        if self.config.refresh_tokens {
            let refresh = uuid::Uuid::new_v4().to_string();
            self.refresh
                .lock()
                .unwrap()
                .insert(refresh.clone(), grant.clone());
            body["refresh_token"] = json!(refresh);
        }
        HttpResponse::Ok()
            .insert_header(("Cache-Control", "no-store"))
            .json(body)
    }

    /// The client's credentials from `client_secret_basic` or the form, checked against its
    /// registration. `Err` is the response to send.
    #[allow(clippy::result_large_err)] // answered at once
    fn authenticate(
        &self,
        request: &HttpRequest,
        form: &HashMap<String, String>,
    ) -> Result<String, HttpResponse> {
        let unauthorized = || {
            oauth_error(
                actix_web::http::StatusCode::UNAUTHORIZED,
                "invalid_client",
                "unknown client or wrong secret",
            )
        };
        let basic = request
            .headers()
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Basic "))
            .and_then(|encoded| {
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .ok()
            })
            .and_then(|decoded| String::from_utf8(decoded).ok())
            .and_then(|pair| {
                let (id, secret) = pair.split_once(':')?;
                let decode = |part: &str| {
                    url::form_urlencoded::parse(format!("x={part}").as_bytes())
                        .next()
                        .map(|(_, value)| value.into_owned())
                };
                Some((decode(id)?, Some(decode(secret)?)))
            });
        let (client_id, secret) = match basic {
            Some(pair) => pair,
            None => (
                form.get("client_id").cloned().ok_or_else(unauthorized)?,
                form.get("client_secret").cloned(),
            ),
        };
        let clients = self.clients.lock().unwrap();
        let registered = clients.get(&client_id).ok_or_else(unauthorized)?;
        if registered.secret.is_some() && registered.secret != secret {
            return Err(unauthorized());
        }
        Ok(client_id)
    }
}

async fn metadata(state: web::Data<State>) -> HttpResponse {
    state.count(|counts| counts.metadata += 1);
    let issuer = &state.issuer;
    let mut grants = vec!["authorization_code"];
    if state.config.refresh_tokens {
        grants.push("refresh_token");
    }
    HttpResponse::Ok().json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "jwks_uri": format!("{issuer}/jwks"),
        "scopes_supported": state.config.scopes_supported,
        "response_types_supported": ["code"],
        "grant_types_supported": grants,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "authorization_response_iss_parameter_supported": true,
    }))
}

async fn jwks(state: web::Data<State>) -> HttpResponse {
    state.count(|counts| counts.jwks += 1);
    let keys = state.keys.lock().unwrap();
    let set = JwkSet {
        keys: keys.iter().map(|key| key.public.clone()).collect(),
    };
    HttpResponse::Ok().json(set)
}

async fn register(state: web::Data<State>, body: web::Json<Value>) -> HttpResponse {
    let Some(redirect_uris) = body
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| {
            uris.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|uris| !uris.is_empty())
    else {
        return oauth_error(
            actix_web::http::StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "redirect_uris is required",
        );
    };
    let method = body
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic")
        .to_owned();
    let client_id = uuid::Uuid::new_v4().to_string();
    let secret = (method != "none").then(|| uuid::Uuid::new_v4().to_string());
    state.clients.lock().unwrap().insert(
        client_id.clone(),
        Registered {
            secret: secret.clone(),
            redirect_uris: redirect_uris.clone(),
        },
    );
    state.count(|counts| counts.registrations += 1);
    let mut answer = body.into_inner();
    answer["client_id"] = json!(client_id);
    answer["token_endpoint_auth_method"] = json!(method);
    answer["client_id_issued_at"] = json!(now());
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
        answer["client_secret_expires_at"] = json!(0);
    }
    HttpResponse::Created().json(answer)
}

async fn authorize(
    state: web::Data<State>,
    query: web::Query<HashMap<String, String>>,
) -> HttpResponse {
    let bad = |description: &str| {
        oauth_error(
            actix_web::http::StatusCode::BAD_REQUEST,
            "invalid_request",
            description,
        )
    };
    if query.get("response_type").map(String::as_str) != Some("code") {
        return bad("response_type must be code");
    }
    if query.get("code_challenge_method").map(String::as_str) != Some("S256") {
        return bad("PKCE with S256 is required");
    }
    let (Some(client_id), Some(redirect_uri), Some(challenge)) = (
        query.get("client_id"),
        query.get("redirect_uri"),
        query.get("code_challenge"),
    ) else {
        return bad("client_id, redirect_uri and code_challenge are required");
    };
    let known = state
        .clients
        .lock()
        .unwrap()
        .get(client_id)
        .is_some_and(|client| client.redirect_uris.contains(redirect_uri));
    if !known {
        return bad("unknown client or unregistered redirect_uri");
    }
    let grant = Grant {
        client_id: client_id.clone(),
        redirect_uri: redirect_uri.clone(),
        code_challenge: challenge.clone(),
        scope: query.get("scope").cloned(),
        resource: query.get("resource").cloned(),
    };
    let code = uuid::Uuid::new_v4().to_string();
    state
        .codes
        .lock()
        .unwrap()
        .insert(code.clone(), grant.clone());
    *state.last_authorization.lock().unwrap() = Some(grant);
    state.count(|counts| counts.authorizations += 1);
    let mut location = url::Url::parse(redirect_uri).unwrap();
    {
        let mut pairs = location.query_pairs_mut();
        pairs.append_pair("code", &code);
        if let Some(client_state) = query.get("state") {
            pairs.append_pair("state", client_state);
        }
        pairs.append_pair("iss", &state.issuer);
    }
    HttpResponse::Found()
        .insert_header(("Location", location.as_str()))
        .finish()
}

async fn token(
    state: web::Data<State>,
    request: HttpRequest,
    form: web::Form<HashMap<String, String>>,
) -> HttpResponse {
    let client_id = match state.authenticate(&request, &form) {
        Ok(client_id) => client_id,
        Err(response) => return response,
    };
    let invalid_grant = |description: &str| {
        oauth_error(
            actix_web::http::StatusCode::BAD_REQUEST,
            "invalid_grant",
            description,
        )
    };
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some(grant) = form
                .get("code")
                .and_then(|code| state.codes.lock().unwrap().remove(code))
            else {
                return invalid_grant("unknown or used code");
            };
            let verifier = form.get("code_verifier").map(String::as_str).unwrap_or("");
            let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if challenge != grant.code_challenge {
                return invalid_grant("code_verifier does not match the challenge");
            }
            if grant.client_id != client_id || form.get("redirect_uri") != Some(&grant.redirect_uri)
            {
                return invalid_grant("the code was issued to another client or redirect_uri");
            }
            if form.get("resource") != grant.resource.as_ref() {
                return invalid_grant("resource differs from the authorization request");
            }
            state.count(|counts| counts.code_exchanges += 1);
            state.issue(&grant)
        }
        Some("refresh_token") if state.config.refresh_tokens => {
            let Some(grant) = form
                .get("refresh_token")
                .and_then(|token| state.refresh.lock().unwrap().remove(token))
            else {
                return invalid_grant("unknown refresh token");
            };
            if grant.client_id != client_id {
                return invalid_grant("the refresh token belongs to another client");
            }
            state.count(|counts| counts.refreshes += 1);
            state.issue(&grant)
        }
        _ => oauth_error(
            actix_web::http::StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "authorization_code or refresh_token",
        ),
    }
}
