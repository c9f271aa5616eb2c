//! Servers on `127.0.0.1:0` that record every request they get and answer as a test says, for
//! the tests of what the OAuth client must *not* send: a protected MCP server whose `401` names
//! whatever metadata the test wants ([`protected`]), and an authorization server that would
//! take anything sent to it ([`authorization_server`]).

use std::sync::{Arc, Mutex};

use actix_web::dev::ServerHandle;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Value, json};

/// One request a [`Recorder`] got.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Its method.
    pub method: String,
    /// Its path.
    pub path: String,
    /// Its `Authorization` header, if any.
    pub authorization: Option<String>,
    /// Its body, as text.
    pub body: String,
}

impl Seen {
    /// `METHOD path`.
    pub fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

type Answer = dyn Fn(&Seen, &str) -> HttpResponse + Send + Sync;

struct Shared {
    base: String,
    answer: Box<Answer>,
    seen: Mutex<Vec<Seen>>,
}

/// A server that records every request and answers with a closure of the request and its own
/// base URL.
pub struct Recorder {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    shared: Arc<Shared>,
    handle: ServerHandle,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("base", &self.base)
            .finish()
    }
}

async fn record(req: HttpRequest, body: web::Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let seen = Seen {
        method: req.method().to_string(),
        path: req.path().to_owned(),
        authorization: req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let answer = (shared.answer)(&seen, &shared.base);
    shared.seen.lock().unwrap().push(seen);
    answer
}

impl Recorder {
    /// Starts a recorder on the current actix system.
    pub fn start(answer: impl Fn(&Seen, &str) -> HttpResponse + Send + Sync + 'static) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let shared = Arc::new(Shared {
            base: base.clone(),
            answer: Box::new(answer),
            seen: Mutex::default(),
        });
        let data = web::Data::from(shared.clone());
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new()
                .app_data(data.clone())
                .default_service(web::to(record))
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
            base,
            shared,
            handle,
        }
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// `METHOD path` of every request so far.
    pub fn lines(&self) -> Vec<String> {
        self.seen().iter().map(Seen::line).collect()
    }

    /// Every `POST` so far (what would carry credentials to an authorization server).
    pub fn posts(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|seen| seen.method == "POST")
            .collect()
    }

    /// Stops the server.
    pub async fn stop(self) {
        let _ = tokio::time::timeout(super::WAIT, self.handle.stop(true)).await;
    }
}

/// The path of the protected resource metadata of a [`protected`] server's `/mcp`.
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The `resource_metadata` of a [`protected`] server's `401`, from its base URL (`None`: no
/// link).
pub type Link = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What a [`protected`] MCP server says about itself.
pub struct Protected {
    /// The `resource_metadata` of its `401`.
    pub link: Link,
    /// The `authorization_servers` of the metadata it serves at [`PRM_PATH`] (`None`: it
    /// serves none).
    pub authorization_servers: Option<Vec<String>>,
}

impl Protected {
    /// Metadata at [`PRM_PATH`] naming `issuers`, linked from the `401`.
    pub fn naming(issuers: Vec<String>) -> Self {
        Self {
            link: Box::new(|base| Some(format!("{base}{PRM_PATH}"))),
            authorization_servers: Some(issuers),
        }
    }
}

/// An MCP server (2025-11-25) at any path: a `POST` without `Authorization` is answered `401`
/// with the challenge `config` says; with one (any), as a server with one tool `t`. It serves
/// the protected resource metadata of its `/mcp` at [`PRM_PATH`].
pub fn protected(config: Protected) -> Recorder {
    Recorder::start(move |seen, base| {
        if seen.method == "GET" && seen.path == PRM_PATH {
            return match &config.authorization_servers {
                Some(issuers) => HttpResponse::Ok().json(json!({
                    "resource": format!("{base}/mcp"),
                    "authorization_servers": issuers,
                })),
                None => HttpResponse::NotFound().finish(),
            };
        }
        if seen.method != "POST" {
            return HttpResponse::NotFound().finish();
        }
        if seen.authorization.is_none() {
            let mut challenge = String::from("Bearer error=\"invalid_token\"");
            if let Some(link) = (config.link)(base) {
                challenge.push_str(&format!(", resource_metadata=\"{link}\""));
            }
            return HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, challenge))
                .json(json!({"error": "invalid_token"}));
        }
        let message: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        let id = message["id"].clone();
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "protected", "version": "1"},
            }),
            "tools/list" => json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}),
            _ if id.is_null() => return HttpResponse::Accepted().finish(),
            _ => json!({}),
        };
        HttpResponse::Ok().json(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    })
}

/// An authorization server whose issuer is its base URL: its metadata (RFC 8414) lists every
/// grant and client authentication method, with `overrides` (from the base URL) merged over
/// it; every `POST` is answered as a success (a token, a registration), so that anything the
/// client sends to it would get through.
pub fn authorization_server(overrides: impl Fn(&str) -> Value + Send + Sync + 'static) -> Recorder {
    Recorder::start(move |seen, base| {
        if seen.method == "GET" && seen.path == "/.well-known/oauth-authorization-server" {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": [
                    "authorization_code",
                    "client_credentials",
                    "urn:ietf:params:oauth:grant-type:jwt-bearer",
                    "urn:ietf:params:oauth:grant-type:token-exchange",
                ],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_basic", "client_secret_post", "private_key_jwt", "none",
                ],
                "code_challenge_methods_supported": ["S256"],
            });
            if let (Some(metadata), Value::Object(extra)) =
                (metadata.as_object_mut(), overrides(base))
            {
                metadata.extend(extra);
            }
            return HttpResponse::Ok().json(metadata);
        }
        match (seen.method.as_str(), seen.path.as_str()) {
            ("POST", "/register") => HttpResponse::Created().json(json!({
                "client_id": "registered",
                "token_endpoint_auth_method": "none",
            })),
            ("POST", _) => HttpResponse::Ok().json(json!({
                "access_token": "taken",
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "Bearer",
                "expires_in": 3600,
            })),
            _ => HttpResponse::NotFound().finish(),
        }
    })
}
