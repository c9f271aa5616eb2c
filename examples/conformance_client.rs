//! The client side of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance client --command ...`): the suite starts a mock server
//! per scenario and runs this program with the server's URL as its last argument and the
//! scenario's name in `MCP_CONFORMANCE_SCENARIO`, the wire version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (`2025-11-25`: the `initialize` handshake, as pinned by
//! [`Lifecycle::V2025`]; `2026-07-28`: [`Lifecycle::Auto`], which finds the mock servers
//! speak 2026-07-28 and speaks it too) and, for some scenarios, data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON).
//!
//! Run by `tests/conformance/run-client.sh` (or `run.sh --client`; see the client section of
//! `tests/conformance/SCENARIOS.md`); by hand:
//! `MCP_CONFORMANCE_SCENARIO=tools_call cargo run --example conformance_client -- http://127.0.0.1:PORT/mcp`
//!
//! The `auth/*` scenarios run the OAuth client ([`OAuth`]) with the headless authorizer (the
//! suite's authorization server redirects at once), the suite's client metadata document URL
//! (used where the authorization server accepts one), DPoP where the authorization server
//! offers it (`auth/dpop`, `auth/dpop-nonce`) and, for `auth/pre-registration`, the
//! credentials of the context. The extension scenarios use the extensions' grants with the
//! context's credentials, bound to the authorization server the suite's MCP server names:
//! `auth/client-credentials-basic` and `-jwt` (client credentials
//! with a secret or a private key), `auth/enterprise-managed-authorization` (the ID token
//! exchanged at the identity provider for an ID-JAG), `auth/wif-jwt-bearer` (the workload's
//! JWT).
//!
//! Exit status: 0 when the scenario's steps completed, 1 when one failed (the error on
//! stderr; for the `auth/*` scenarios that expect a refusal, the refusal), 2 on a missing URL
//! or an unknown scenario.

use std::process::ExitCode;

use actix_mcp::client::auth::{
    Algorithm, ClientCredential, ClientRegistration, HeadlessAuthorizer, IdentityProvider, OAuth,
    OAuthBuilder, ProtectedResourceMetadata, SigningKey, protected_resource_metadata_urls,
};
use actix_mcp::client::transport::{HttpOptions, HttpTransport};
use actix_mcp::client::{
    Client, ClientBuilder, ClientError, Era, Lifecycle, fill_elicitation_defaults,
};
use actix_mcp::protocol::{ElicitAction, ElicitRequestParams, ElicitResult};
use serde_json::{Value, json};

/// The wire version the suite asks for.
fn wire_version() -> String {
    std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into())
}

fn builder() -> ClientBuilder {
    let lifecycle = if wire_version().as_str() >= "2026-07-28" {
        Lifecycle::Auto
    } else {
        Lifecycle::V2025
    };
    Client::builder("actix-mcp-conformance-client", env!("CARGO_PKG_VERSION")).lifecycle(lifecycle)
}

/// A builder whose elicitation handler accepts with the schema's defaults (and
/// `confirmed: true` for the MRTR mocks' confirmation forms).
fn accepting() -> ClientBuilder {
    builder().elicitation(|params: ElicitRequestParams, _| async move {
        let mut result = ElicitResult::new(ElicitAction::Accept);
        if let ElicitRequestParams::Form(form) = &params
            && form
                .requested_schema
                .properties
                .iter()
                .any(|(name, _)| name == "confirmed")
        {
            result
                .content
                .get_or_insert_with(Default::default)
                .insert("confirmed".into(), json!(true));
        }
        fill_elicitation_defaults(&params, &mut result);
        Ok(result)
    })
}

/// Where the suite's client ID metadata document is said to live (the mock authorization
/// servers check the `client_id` against it and never fetch it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The redirect URI: the mock authorization server redirects there at once, and the headless
/// authorizer reads the code from that redirect without following it.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// `MCP_CONFORMANCE_CONTEXT`, or `null`.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

async fn connect(builder: ClientBuilder, url: &str) -> Result<Client, ClientError> {
    connect_with(builder, url, HttpOptions::default()).await
}

async fn connect_with(
    builder: ClientBuilder,
    url: &str,
    options: HttpOptions,
) -> Result<Client, ClientError> {
    let client = builder
        .connect(HttpTransport::with_options(url, options))
        .await?;
    let wanted_v2026 = wire_version().as_str() >= "2026-07-28";
    if wanted_v2026 != (client.era() == Era::V2026) {
        eprintln!(
            "warning: asked for {} but speaking {:?}",
            wire_version(),
            client.protocol_version()
        );
    }
    Ok(client)
}

/// `initialize`: connect, list the tools, close.
async fn initialize(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    client.tools().await?;
    client.close().await;
    Ok(())
}

/// `tools_call`: list the tools and call `add_numbers`.
async fn tools_call(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    client.tools().await?;
    let result = client
        .call_tool("add_numbers", json!({"a": 2, "b": 3}))
        .await?;
    eprintln!("add_numbers: {}", result.text_content());
    client.close().await;
    Ok(())
}

/// `elicitation-sep1034-client-defaults`: accept the form with every field the user left
/// out filled from the schema's defaults.
async fn elicitation_defaults(url: &str) -> Result<(), ClientError> {
    let client = connect(accepting(), url).await?;
    client.tools().await?;
    client
        .call_tool("test_client_elicitation_defaults", ())
        .await?;
    client.close().await;
    Ok(())
}

/// `sse-retry`: the server closes the answer's stream early; the transport resumes it with
/// `Last-Event-ID` after the advertised `retry`.
async fn sse_retry(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    client.tools().await?;
    client.call_tool("test_reconnection", ()).await?;
    client.close().await;
    Ok(())
}

/// `json-schema-2020-12-preservation`: hand the focal tool's input schema back verbatim.
async fn schema_preservation(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    let tools = client.tools().await?;
    let schema = tools
        .iter()
        .find(|tool| tool.name == "json_schema_2020_12_tool")
        .map(|tool| tool.input_schema.clone())
        .ok_or_else(|| ClientError::Protocol("the focal tool is missing".into()))?;
    client
        .call_tool("json_schema_echo", json!({ "schema": schema }))
        .await?;
    client.close().await;
    Ok(())
}

/// `request-metadata` (2026): connecting sends `server/discover` (retried once with a version
/// the server lists after its `-32022`), then `tools/list`; every request carries the `_meta`
/// and the `MCP-Protocol-Version` header.
async fn request_metadata(url: &str) -> Result<(), ClientError> {
    let client = connect(accepting(), url).await?;
    client.tools().await?;
    client.close().await;
    Ok(())
}

/// `sep-2322-client-request-state` (2026): the MRTR tools, driven by the client (the
/// elicitations answered by the handler), with an unrelated call in between.
async fn request_state(url: &str) -> Result<(), ClientError> {
    let client = connect(accepting(), url).await?;
    client.tools().await?;
    for tool in [
        "test_mrtr_echo_state",
        "test_mrtr_unrelated",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ] {
        let result = client.call_tool(tool, ()).await?;
        eprintln!("{tool}: {}", result.text_content());
    }
    client.close().await;
    Ok(())
}

/// `http-standard-headers` (2026): list and use tools, resources and prompts, so that each
/// method's `Mcp-Method` / `Mcp-Name` headers are seen.
async fn standard_headers(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    for tool in client.tools().await? {
        client.call_tool(&tool.name, ()).await?;
    }
    for resource in client.resources().await? {
        client.read_resource(&resource.uri).await?;
    }
    for prompt in client.prompts().await? {
        client
            .get_prompt(&prompt.name, std::iter::empty::<(String, String)>())
            .await?;
    }
    client.close().await;
    Ok(())
}

/// `http-custom-headers` (2026): the tool calls of `MCP_CONFORMANCE_CONTEXT`'s `toolCalls`,
/// whose `x-mcp-header` arguments go into `Mcp-Param-*` headers.
async fn custom_headers(url: &str) -> Result<(), ClientError> {
    let context = context();
    let mut calls: Vec<(String, Value)> = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|call| {
            let name = call.get("name")?.as_str()?.to_owned();
            Some((name, call.get("arguments").cloned().unwrap_or(json!({}))))
        })
        .collect();
    if !calls
        .iter()
        .any(|(name, _)| name == "test_custom_headers_null")
    {
        calls.push((
            "test_custom_headers_null".into(),
            json!({"region": "us-east1", "priority": 1, "verbose": null, "query": "SELECT 1"}),
        ));
    }
    let client = connect(builder(), url).await?;
    client.tools().await?;
    for (name, arguments) in calls {
        client.call_tool(&name, arguments).await?;
    }
    client.close().await;
    Ok(())
}

/// `http-invalid-tool-headers` (2026): list the tools (those with invalid `x-mcp-header`
/// annotations are dropped) and call `valid_tool`.
async fn invalid_tool_headers(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    let tools = client.tools().await?;
    let valid = tools.iter().find(|tool| tool.name == "valid_tool");
    if valid.is_none() {
        return Err(ClientError::Protocol("valid_tool was dropped".into()));
    }
    client
        .call_tool("valid_tool", json!({"region": "us-west1"}))
        .await?;
    client.close().await;
    Ok(())
}

/// `json-schema-ref-no-deref` (2026): list the tools; their schemas' network `$ref`s are
/// kept as they are, never fetched.
async fn ref_no_deref(url: &str) -> Result<(), ClientError> {
    let client = connect(builder(), url).await?;
    client.tools().await?;
    client.close().await;
    Ok(())
}

/// A string of the context, or an error naming it.
fn required(context: &Value, name: &str) -> Result<String, ClientError> {
    context
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ClientError::Protocol(format!("the context has no {name:?}")))
}

/// The authorization server the suite's MCP server at `url` names first in its protected
/// resource metadata (RFC 9728, at the well-known URLs).
///
/// The extension scenarios give their credentials without the issuer they belong to, and the
/// OAuth client sends credentials only to the authorization server they are bound to. This
/// program trusts the suite's MCP server to name it, as an application may trust a server it
/// runs itself; an application given credentials by an authorization server binds them to that
/// server's issuer instead.
async fn named_issuer(url: &str) -> Result<String, ClientError> {
    let fail = |why: String| ClientError::Protocol(format!("the server's issuer: {why}"));
    let server = url.parse().map_err(|err| fail(format!("{url:?}: {err}")))?;
    let http = reqwest::Client::new();
    for metadata_url in protected_resource_metadata_urls(&server) {
        let response = http
            .get(metadata_url)
            .send()
            .await
            .map_err(|err| fail(err.to_string()))?;
        if !response.status().is_success() {
            continue;
        }
        let metadata: ProtectedResourceMetadata =
            response.json().await.map_err(|err| fail(err.to_string()))?;
        if let Some(issuer) = metadata.authorization_servers.into_iter().next() {
            return Ok(issuer);
        }
    }
    Err(fail("no protected resource metadata names one".into()))
}

/// The OAuth client of the `auth/*` scenarios at `url`. The extension scenarios get their
/// grants, with the context's credentials, bound to the issuer the server names
/// ([`named_issuer`]). The others get the authorization-code flow, headless, with the
/// pre-registered credentials of the context when it has some (bound to its issuer), and DPoP
/// with the authorization servers that offer it.
async fn oauth(url: &str, scenario: &str) -> Result<OAuth, ClientError> {
    let context = context();
    let text = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
    let builder: OAuthBuilder = match scenario {
        "auth/client-credentials-basic" => OAuth::client_credentials(
            named_issuer(url).await?,
            required(&context, "client_id")?,
            ClientCredential::secret(required(&context, "client_secret")?),
        ),
        "auth/client-credentials-jwt" => {
            let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
            let alg: Algorithm = alg
                .parse()
                .map_err(|_| ClientError::Protocol(format!("unknown algorithm {alg:?}")))?;
            let key = SigningKey::from_pem(required(&context, "private_key_pem")?, alg)
                .map_err(|err| ClientError::Protocol(format!("the private key: {err}")))?;
            OAuth::client_credentials(
                named_issuer(url).await?,
                required(&context, "client_id")?,
                key,
            )
        }
        "auth/enterprise-managed-authorization" => {
            let idp = IdentityProvider::new(
                required(&context, "idp_issuer")?,
                required(&context, "idp_client_id")?,
            )
            .token_endpoint(required(&context, "idp_token_endpoint")?);
            OAuth::enterprise(
                named_issuer(url).await?,
                required(&context, "client_id")?,
                ClientCredential::secret(required(&context, "client_secret")?),
                idp,
                required(&context, "idp_id_token")?,
            )
        }
        "auth/wif-jwt-bearer" => OAuth::jwt_bearer(
            named_issuer(url).await?,
            required(&context, "client_id")?,
            required(&context, "valid_jwt")?,
        ),
        _ => {
            let mut oauth = OAuth::authorization_code(REDIRECT_URI, HeadlessAuthorizer::new())
                .client_metadata_url(CLIENT_METADATA_URL)
                .dpop_auto();
            if let Some(client_id) = text("client_id") {
                let mut registration = ClientRegistration::pre_registered(client_id);
                if let Some(secret) = text("client_secret") {
                    registration = registration.secret(secret);
                }
                if let Some(issuer) = text("issuer") {
                    registration = registration.issuer(issuer);
                }
                oauth = oauth.client_registration(registration);
            }
            oauth
        }
    };
    builder.client_name("actix-mcp-conformance-client").build()
}

/// The `auth/*` scenarios: connect (the first request is refused with `401`, which runs the
/// authorization flow), list the tools and call `test-tool` (which the step-up scenarios
/// guard with more scopes), close. A scenario that expects a refusal ends with the client's
/// authorization error.
async fn authorized(url: &str, scenario: &str) -> Result<(), ClientError> {
    let options = HttpOptions::default().auth(oauth(url, scenario).await?);
    let client = connect_with(builder(), url, options).await?;
    client.tools().await?;
    let result = client.call_tool("test-tool", json!({})).await?;
    eprintln!("test-tool: {}", result.text_content());
    client.close().await;
    Ok(())
}

#[actix_rt::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance_client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let outcome = match scenario.as_str() {
        "initialize" => initialize(&url).await,
        "tools_call" => tools_call(&url).await,
        "elicitation-sep1034-client-defaults" => elicitation_defaults(&url).await,
        "sse-retry" => sse_retry(&url).await,
        "json-schema-2020-12-preservation" => schema_preservation(&url).await,
        "request-metadata" => request_metadata(&url).await,
        "sep-2322-client-request-state" => request_state(&url).await,
        "http-standard-headers" => standard_headers(&url).await,
        "http-custom-headers" => custom_headers(&url).await,
        "http-invalid-tool-headers" => invalid_tool_headers(&url).await,
        "json-schema-ref-no-deref" => ref_no_deref(&url).await,
        auth if auth.starts_with("auth/") => authorized(&url, auth).await,
        other => {
            eprintln!("unknown scenario {other:?}");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{scenario}: {err}");
            ExitCode::from(1)
        }
    }
}
