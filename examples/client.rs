//! A command-line MCP client: connects to any MCP server (a command over stdio, or a
//! Streamable HTTP URL), runs one request, and prints its JSON result on stdout (one line).
//!
//! ```text
//! cargo run --example client -- --stdio "cargo run --example stdio_server" tools
//! cargo run --example client -- --url http://127.0.0.1:8080/mcp call echo '{"message":"hi"}'
//! cargo run --example client -- --url http://127.0.0.1:8080/mcp --progress call sleep '{"ms":500}'
//! cargo run --example client -- --url https://mcp.example.com/mcp --oauth \
//!     --oauth-client-metadata-url https://app.example.com/client.json tools
//! cargo run --example client -- --url https://mcp.example.com/mcp --oauth \
//!     --oauth-client-credentials --oauth-client-id my-service \
//!     --oauth-issuer https://auth.example.com --oauth-private-key key.pem tools
//! ```
//!
//! `--oauth` authorizes with OAuth 2.1 when the server answers `401`, headless: the
//! authorization URL is fetched without following its redirect and the code is read from the
//! `Location` (an authorization server that shows a login page cannot be used this way). The
//! client is identified by `--oauth-client-id` (pre-registered, with `--oauth-client-secret` or
//! `--oauth-private-key`, which need `--oauth-issuer`: credentials go to their own
//! authorization server only), by `--oauth-client-metadata-url` where the server accepts
//! client metadata documents, or by dynamic registration.
//! `--oauth-client-credentials` uses the client credentials grant instead (machine to machine:
//! no user, no registration): the pre-registered client authenticates with its secret, or with
//! its private key (`private_key_jwt`; an ES256, ES384, RS256 or EdDSA key in a PKCS#8 PEM
//! file, RSA also PKCS#1).
//!
//! `--lifecycle` pins the era: `auto` (the default) probes `server/discover` and speaks
//! 2026-07-28 to a server that answers it, 2025-11-25 otherwise. Some servers serve both eras
//! but can ask the client for input (sampling, elicitation, roots) only inside a 2025-11-25
//! session (the official Python SDK 2.3's `ctx.elicit` and `create_message` answer "no
//! back-channel" in a 2026 request): pass `--lifecycle 2025-11-25` to use such tools. `info`
//! prints which era was chosen (`era`) and, in the 2026 era, the `server/discover` result.
//!
//! `call --task` declares the Tasks extension (2026-07-28 only) and runs the call as a task:
//! the server may answer with a task, which the client polls (answering its input requests with
//! the handlers above) until it ends; the tool's result is printed as `call` prints it.
//!
//! Exit status: 0 on success, 1 when the server answered with an error or the connection
//! failed (the error is printed as JSON on stderr), 2 on bad usage.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use actix_mcp::client::auth::{
    Algorithm, ClientCredentials, ClientRegistration, HeadlessAuthorizer, OAuth, OAuthBuilder,
    SigningKey,
};
use actix_mcp::client::transport::{ChildProcess, HttpOptions, HttpTransport};
use actix_mcp::client::{
    CallOptions, Client, ClientBuilder, ClientError, ClientExtension, Era, Lifecycle,
    ServerRequest, fill_elicitation_defaults,
};
use actix_mcp::protocol::{
    CompletionArgument, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, LoggingLevel, OneOrMany, Reference, Role, Root,
    SamplingMessageContentBlock,
};
use clap::{Parser, Subcommand};
use serde_json::{Map, Value, json};

#[derive(Parser)]
#[command(about = "Run one MCP request against a server and print the result as JSON")]
struct Cli {
    /// The server as a command line to start (split on whitespace).
    #[arg(long, conflicts_with = "url", required_unless_present = "url")]
    stdio: Option<String>,
    /// The server's Streamable HTTP endpoint.
    #[arg(long)]
    url: Option<String>,
    /// An extra HTTP header, `Name: value` (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Authorize with OAuth 2.1 (headless authorization-code flow) when the server asks.
    #[arg(long, requires = "url")]
    oauth: bool,
    /// A pre-registered OAuth client ID.
    #[arg(long, value_name = "ID", requires = "oauth")]
    oauth_client_id: Option<String>,
    /// The secret of the pre-registered client (needs `--oauth-issuer`).
    #[arg(long, value_name = "SECRET", requires_all = ["oauth_client_id", "oauth_issuer"])]
    oauth_client_secret: Option<String>,
    /// A PEM file with the pre-registered client's private key, for `private_key_jwt` (needs
    /// `--oauth-issuer`).
    #[arg(long, value_name = "PEM_FILE", requires_all = ["oauth_client_id", "oauth_issuer"])]
    oauth_private_key: Option<std::path::PathBuf>,
    /// The issuer the pre-registered client belongs to (its credentials go nowhere else);
    /// without it, only a public client ID is used, with whichever authorization server the
    /// MCP server names.
    #[arg(long, value_name = "URL", requires = "oauth_client_id")]
    oauth_issuer: Option<String>,
    /// Use the client credentials grant (needs `--oauth-client-id` and `--oauth-issuer` with
    /// a secret or a private key) instead of the authorization-code flow.
    #[arg(long, requires_all = ["oauth_client_id", "oauth_issuer"])]
    oauth_client_credentials: bool,
    /// The redirect URI (`https://`, or `http://` on a loopback host).
    #[arg(
        long,
        value_name = "URI",
        requires = "oauth",
        default_value = "http://127.0.0.1:8765/callback"
    )]
    oauth_redirect_uri: String,
    /// Scopes to ask for when the server names none (space-separated).
    #[arg(long, value_name = "SCOPES", requires = "oauth")]
    oauth_scope: Option<String>,
    /// The URL of the client's metadata document, used as its client ID where accepted.
    #[arg(long, value_name = "URL", requires = "oauth")]
    oauth_client_metadata_url: Option<String>,
    /// Print each progress notification to stderr as one JSON line.
    #[arg(long)]
    progress: bool,
    /// Answer `sampling/createMessage` with this text.
    #[arg(long, value_name = "TEXT")]
    sampling_reply: Option<String>,
    /// Accept elicitations: a form with this JSON object (omitted fields take the schema's
    /// defaults), a URL without content.
    #[arg(long, value_name = "JSON", conflicts_with = "elicit_decline")]
    elicit_accept: Option<String>,
    /// Decline elicitations.
    #[arg(long)]
    elicit_decline: bool,
    /// Offer these roots to the server: several after one flag, comma-separated
    /// (`--roots file:///a,file:///b`; a comma inside a URI is `%2C`), or the flag repeated.
    #[arg(long, value_name = "URIS", value_delimiter = ',')]
    roots: Vec<String>,
    /// Which era to speak: `auto` probes `server/discover` and falls back to `initialize`;
    /// `2025-11-25` runs the handshake only (for servers whose tools need a session, such as
    /// those that ask the client for input in a 2025 session only); `2026-07-28` never falls
    /// back.
    #[arg(long, value_name = "ERA", default_value = "auto", value_parser = ["auto", "2025-11-25", "2026-07-28"])]
    lifecycle: String,
    /// Cancel the request after this many milliseconds; prints `{"cancelled":true}`.
    #[arg(long, value_name = "N")]
    cancel_after_ms: Option<u64>,
    /// Set the server's log level (when it declares logging) and print its log notifications
    /// to stderr.
    #[arg(long, value_name = "LEVEL", value_parser = [
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
    ])]
    log_level: Option<String>,
    /// Give up on the request after this many milliseconds.
    #[arg(long, value_name = "N")]
    timeout_ms: Option<u64>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// What the server said about itself (its `initialize` result, or in the 2026 era one made
    /// from `server/discover`), with `era` (the one chosen) and, in the 2026 era, `discover`
    /// (the `server/discover` result as received).
    Info,
    /// Every tool (all pages).
    Tools,
    /// Every prompt (all pages).
    Prompts,
    /// Every resource (all pages).
    Resources,
    /// Every resource template (all pages).
    Templates,
    /// Call a tool.
    Call {
        /// The tool.
        name: String,
        /// Its arguments, a JSON object.
        args: Option<String>,
        /// Run the call as a task (the Tasks extension, 2026-07-28): declare the extension,
        /// follow the task the server answers with until it ends, and print the tool's result.
        #[arg(long)]
        task: bool,
    },
    /// Get a prompt.
    Prompt {
        /// The prompt.
        name: String,
        /// Its arguments, a JSON object of strings.
        args: Option<String>,
    },
    /// Read a resource.
    Read {
        /// The resource's URI.
        uri: String,
    },
    /// Complete an argument of a prompt or resource template.
    Complete {
        /// The prompt whose argument to complete.
        #[arg(
            long,
            conflicts_with = "template",
            required_unless_present = "template"
        )]
        prompt: Option<String>,
        /// The resource template whose variable to complete.
        #[arg(long)]
        template: Option<String>,
        /// The argument.
        arg: String,
        /// What is typed so far.
        value: String,
    },
    /// Check the server answers.
    Ping,
    /// Every skill the server lists (the Skills extension; all pages).
    #[cfg(feature = "skills")]
    Skills,
    /// One skill: its entry (confirmed with `skills/get`) and its `SKILL.md`, fetched and
    /// verified against the entry (digest, size, frontmatter).
    #[cfg(feature = "skills")]
    Skill {
        /// The URI of its `SKILL.md`.
        uri: String,
    },
}

/// `skill URI`: the entry and its verified instructions.
#[cfg(feature = "skills")]
async fn skill(client: &Client, uri: &str) -> Result<Value, ClientError> {
    let entry = client.skill(uri).await?;
    let instructions = client
        .skill_loader()
        .activate(&entry)
        .instructions()
        .await
        .map_err(|err| match err {
            actix_mcp::client::skills::SkillLoadError::Client(err) => err,
            other => ClientError::Protocol(other.to_string()),
        })?;
    Ok(json!({"skill": entry, "instructions": instructions}))
}

/// A usage error found after parsing (exit 2).
struct Usage(String);

fn json_object(text: Option<&str>) -> Result<Map<String, Value>, Usage> {
    match text.map(serde_json::from_str::<Value>) {
        None => Ok(Map::new()),
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Ok(other)) => Err(Usage(format!("expected a JSON object, got {other}"))),
        Some(Err(err)) => Err(Usage(format!("invalid JSON: {err}"))),
    }
}

fn stderr_line(value: &Value) {
    eprintln!("{value}");
}

fn builder(cli: &Cli) -> Result<ClientBuilder, Usage> {
    let mut builder = Client::builder("actix-mcp-cli", env!("CARGO_PKG_VERSION"));
    builder = builder.lifecycle(match cli.lifecycle.as_str() {
        "2025-11-25" => Lifecycle::V2025,
        "2026-07-28" => Lifecycle::V2026,
        _ => Lifecycle::Auto,
    });
    if let Some(timeout) = cli.timeout_ms {
        builder = builder.request_timeout(Some(Duration::from_millis(timeout)));
    }
    if matches!(cli.command, Command::Call { task: true, .. }) {
        builder = builder.extension(ClientExtension::tasks());
    }
    if let Some(reply) = cli.sampling_reply.clone() {
        builder = builder.sampling(move |_: CreateMessageRequestParams, _: ServerRequest| {
            let reply = reply.clone();
            async move {
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: OneOrMany::One(SamplingMessageContentBlock::text(reply)),
                    model: "actix-mcp-cli".into(),
                    stop_reason: Some("endTurn".into()),
                    meta: None,
                })
            }
        });
    }
    if let Some(accept) = cli.elicit_accept.as_deref() {
        let content = json_object(Some(accept))?;
        builder = builder
            .elicitation(move |params: ElicitRequestParams, _| {
                let mut result = ElicitResult::new(ElicitAction::Accept);
                // Only a form has content; a URL elicitation is accepted without any.
                if matches!(params, ElicitRequestParams::Form(_)) {
                    result.content = Some(content.clone());
                    fill_elicitation_defaults(&params, &mut result);
                }
                async move { Ok(result) }
            })
            .elicitation_url(true);
    } else if cli.elicit_decline {
        builder = builder
            .elicitation(|_, _| async { Ok(ElicitResult::new(ElicitAction::Decline)) })
            .elicitation_url(true);
    }
    if !cli.roots.is_empty() {
        let roots = cli
            .roots
            .iter()
            .map(|uri| Root::new(uri.clone(), None))
            .collect();
        builder = builder.roots_list(roots);
    }
    if cli.log_level.is_some() {
        builder = builder.on_log_message(|log| {
            stderr_line(&serde_json::to_value(&log).unwrap_or(Value::Null));
        });
    }
    Ok(builder)
}

/// The private key in the PEM file `path`, for the first of the algorithms it fits.
fn private_key(path: &std::path::Path) -> Result<SigningKey, Usage> {
    let pem = std::fs::read(path)
        .map_err(|err| Usage(format!("--oauth-private-key {}: {err}", path.display())))?;
    [
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::RS256,
        Algorithm::EdDSA,
    ]
    .into_iter()
    .find_map(|alg| SigningKey::from_pem(&pem, alg).ok())
    .ok_or_else(|| {
        Usage(format!(
            "--oauth-private-key {}: not a P-256, P-384, RSA or Ed25519 private key in PEM",
            path.display()
        ))
    })
}

/// The OAuth client of `--oauth`.
fn oauth(cli: &Cli) -> Result<OAuth, Usage> {
    let mut oauth: OAuthBuilder = if cli.oauth_client_credentials {
        if cli.oauth_client_secret.is_none() && cli.oauth_private_key.is_none() {
            return Err(Usage(
                "--oauth-client-credentials needs --oauth-client-secret or --oauth-private-key"
                    .into(),
            ));
        }
        OAuth::builder(ClientCredentials::new())
    } else {
        OAuth::authorization_code(&cli.oauth_redirect_uri, HeadlessAuthorizer::new())
    }
    .client_name("actix-mcp-cli");
    if let Some(url) = &cli.oauth_client_metadata_url {
        oauth = oauth.client_metadata_url(url);
    }
    if let Some(scope) = &cli.oauth_scope {
        oauth = oauth.scope(scope);
    }
    if let Some(id) = &cli.oauth_client_id {
        let mut registration = ClientRegistration::pre_registered(id);
        if let Some(secret) = &cli.oauth_client_secret {
            registration = registration.secret(secret);
        }
        if let Some(path) = &cli.oauth_private_key {
            registration = registration.private_key(private_key(path)?);
        }
        if let Some(issuer) = &cli.oauth_issuer {
            registration = registration.issuer(issuer);
        }
        oauth = oauth.client_registration(registration);
    }
    oauth.build().map_err(|err| Usage(err.to_string()))
}

async fn connect(cli: &Cli) -> Result<Result<Client, ClientError>, Usage> {
    let builder = builder(cli)?;
    if let Some(url) = &cli.url {
        let mut options = HttpOptions::default();
        for header in &cli.headers {
            let Some((name, value)) = header.split_once(':') else {
                return Err(Usage(format!("--header {header:?} is not `Name: value`")));
            };
            options = options.header(name.trim(), value.trim());
        }
        if cli.oauth {
            options = options.auth(oauth(cli)?);
        }
        return Ok(builder
            .connect(HttpTransport::with_options(url.as_str(), options))
            .await);
    }
    let line = cli.stdio.as_deref().unwrap_or_default();
    let Some(child) = ChildProcess::from_command_line(line) else {
        return Err(Usage("--stdio needs a command".into()));
    };
    Ok(builder.connect(child).await)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, ClientError> {
    serde_json::to_value(value).map_err(|err| ClientError::Protocol(err.to_string()))
}

/// `info`: what the server said about itself, the era chosen and the discover result.
fn info(client: &Client) -> Result<Value, ClientError> {
    let mut out = to_json(client.initialize_result())?;
    if let Value::Object(fields) = &mut out {
        let era = match client.era() {
            Era::V2026 => "2026-07-28".to_owned(),
            Era::V2025 => "2025-11-25".to_owned(),
            other => format!("{other:?}"),
        };
        fields.insert("era".into(), era.into());
        if let Some(discover) = client.discover_result() {
            fields.insert("discover".into(), to_json(discover)?);
        }
    }
    Ok(out)
}

async fn run(cli: &Cli, client: &Client) -> Result<Result<Value, ClientError>, Usage> {
    if let Some(level) = &cli.log_level {
        let level: LoggingLevel = serde_json::from_value(Value::String(level.clone()))
            .map_err(|_| Usage(format!("unknown log level {level:?}")))?;
        // A server that does not declare logging has no `logging/setLevel` to call; whatever
        // it logs is still printed.
        if client.server_capabilities().logging.is_some()
            && let Err(err) = client.set_logging_level(level).await
        {
            return Ok(Err(err));
        }
    }
    let mut options = CallOptions::new();
    if let Some(timeout) = cli.timeout_ms {
        options = options.timeout(Duration::from_millis(timeout));
    }
    if cli.progress {
        options = options.progress(|progress| {
            stderr_line(&serde_json::to_value(&progress).unwrap_or(Value::Null));
        });
    }
    let (method, params) = match &cli.command {
        Command::Info => return Ok(info(client)),
        Command::Tools => return Ok(client.tools().await.and_then(|v| to_json(&v))),
        Command::Prompts => return Ok(client.prompts().await.and_then(|v| to_json(&v))),
        Command::Resources => return Ok(client.resources().await.and_then(|v| to_json(&v))),
        Command::Templates => {
            return Ok(client.resource_templates().await.and_then(|v| to_json(&v)));
        }
        Command::Ping => return Ok(client.ping().await.map(|()| json!({}))),
        #[cfg(feature = "skills")]
        Command::Skills => return Ok(client.skills().await.and_then(|v| to_json(&v))),
        #[cfg(feature = "skills")]
        Command::Skill { uri } => return Ok(skill(client, uri).await),
        Command::Call {
            name,
            args,
            task: true,
        } => {
            let arguments = json_object(args.as_deref())?;
            let call = async move {
                let handle = client
                    .call_tool_as_task_with(name, arguments, options)
                    .await?;
                to_json(&handle.result().await?)
            };
            return Ok(cancel_after(cli, call).await);
        }
        Command::Call { name, args, .. } => (
            "tools/call",
            json!({"name": name, "arguments": json_object(args.as_deref())?}),
        ),
        Command::Prompt { name, args } => (
            "prompts/get",
            json!({"name": name, "arguments": json_object(args.as_deref())?}),
        ),
        Command::Read { uri } => ("resources/read", json!({"uri": uri})),
        Command::Complete {
            prompt,
            template,
            arg,
            value,
        } => {
            let reference = match (prompt, template) {
                (Some(prompt), _) => Reference::prompt(prompt.clone()),
                (None, Some(template)) => Reference::resource(template.clone()),
                (None, None) => return Err(Usage("--prompt or --template is required".into())),
            };
            (
                "completion/complete",
                json!({"ref": reference, "argument": CompletionArgument::new(arg.clone(), value.clone())}),
            )
        }
    };
    // `request` drives a 2026 server's `input_required` rounds through the handlers above
    // (sampling, elicitation, roots), and sends a `tools/call` with its `Mcp-Param-*` headers
    // (retried once on `-32020`); `start_request` would return the first round as is.
    let pending = client.request::<Value>(method, Some(params), options);
    Ok(cancel_after(cli, pending).await)
}

/// `pending`'s outcome, or `{"cancelled":true}` once `--cancel-after-ms` has passed.
async fn cancel_after(
    cli: &Cli,
    pending: impl Future<Output = Result<Value, ClientError>>,
) -> Result<Value, ClientError> {
    let Some(after) = cli.cancel_after_ms else {
        return pending.await;
    };
    let mut pending = Box::pin(pending);
    tokio::select! {
        outcome = &mut pending => outcome,
        () = tokio::time::sleep(Duration::from_millis(after)) => {
            // Dropping the request (or the task's handle) cancels it at the server.
            drop(pending);
            Ok(json!({"cancelled": true}))
        }
    }
}

fn error_json(error: &ClientError) -> Value {
    match error.rpc() {
        Some(rpc) => json!({"error": rpc}),
        None => json!({"error": {"message": error.to_string()}}),
    }
}

#[actix_rt::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let client = match connect(&cli).await {
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
        Ok(Err(err)) => {
            stderr_line(&error_json(&err));
            return ExitCode::from(1);
        }
        Ok(Ok(client)) => client,
    };
    let outcome = run(&cli, &client).await;
    client.close().await;
    match outcome {
        Err(Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Ok(Ok(value)) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Ok(Err(err)) => {
            stderr_line(&error_json(&err));
            ExitCode::from(1)
        }
    }
}
