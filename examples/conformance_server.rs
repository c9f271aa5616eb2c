//! Every fixture the official MCP conformance suite's server scenarios call
//! (`@modelcontextprotocol/conformance server --requirements 2025-11-25`), served over
//! Streamable HTTP at `http://127.0.0.1:PORT/mcp`.
//!
//! Run: `cargo run --example conformance_server -- --port 3001`

use std::sync::Arc;
use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteResult, Completion, CreateMessageRequestParams, ElicitationSchema, LoggingLevel,
    SamplingMessageContentBlock,
};
use actix_mcp::{Arguments, ResourceDef, ServerBuilder};
use clap::Parser;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

#[derive(Parser)]
struct Cli {
    /// Port to listen on (127.0.0.1).
    #[arg(long, default_value_t = 3001)]
    port: u16,
    /// Serve as one node of a cluster sharing its sessions, events and tasks on the Redis
    /// server at URL (needs `--features redis`).
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
    /// Seal `requestState` with this key (64 hex digits), the same on every node of a cluster
    /// (default: a random key per process).
    #[arg(long, value_name = "HEX")]
    state_key: Option<String>,
}

/// The cluster and task store of `--redis`.
#[cfg(feature = "redis")]
async fn on_redis(
    url: &str,
) -> std::io::Result<(actix_mcp::cluster::Cluster, Arc<dyn actix_mcp::TaskStore>)> {
    use actix_mcp::cluster::redis::{Redis, RedisTaskStore};
    let redis = Redis::connect(url, "mcp")
        .await
        .map_err(std::io::Error::other)?;
    let tasks: Arc<dyn actix_mcp::TaskStore> = Arc::new(RedisTaskStore::new(redis.clone()));
    Ok((actix_mcp::cluster::Cluster::on_redis(redis), tasks))
}

#[cfg(not(feature = "redis"))]
async fn on_redis(
    _: &str,
) -> std::io::Result<(actix_mcp::cluster::Cluster, Arc<dyn actix_mcp::TaskStore>)> {
    Err(std::io::Error::other(
        "--redis needs the `redis` feature: cargo run --features redis --example conformance_server",
    ))
}

#[derive(Deserialize, JsonSchema)]
struct PromptArg {
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct MessageArg {
    message: String,
}

#[derive(Deserialize, JsonSchema)]
struct TwoArgs {
    arg1: String,
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ResourceUriArg {
    resource_uri: String,
}

fn no_args() -> serde_json::Map<String, Value> {
    json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn schema(value: Value) -> ElicitationSchema {
    serde_json::from_value(value).unwrap_or_else(|err| panic!("fixture schema is valid: {err}"))
}

fn elicitation_text(label: &str, result: &actix_mcp::protocol::ElicitResult) -> String {
    let content = result
        .content
        .as_ref()
        .map_or("null".to_owned(), |c| Value::Object(c.clone()).to_string());
    format!(
        "{label}: action={}, content={content}",
        serde_json::to_value(result.action)
            .unwrap_or(Value::Null)
            .as_str()
            .unwrap_or("")
    )
}

/// The fixtures only the 2026-07-28 set calls: capability gating, logging without a level,
/// list-change hooks for `subscriptions/listen`, and `x-mcp-header` parameters.
fn stateless_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool(
                "test_missing_capability",
                "Needs the client's sampling capability (refused with -32021 without it)",
                |cx: RequestContext| async move {
                    format!(
                        "sampling declared by {}",
                        cx.client_info()
                            .map_or("an unnamed client", |i| i.name.as_str())
                    )
                },
            )
            .input_schema(no_args())
            .requires_client_capabilities(json!({"sampling": {}})),
        )
        .tool(
            tool(
                "test_logging_tool",
                "Logs three messages at info level",
                |cx: RequestContext| async move {
                    for message in [
                        "Tool execution started",
                        "Tool processing data",
                        "Tool execution completed",
                    ] {
                        cx.log(LoggingLevel::Info, message, Some("conformance"));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    "logged (only to requests that asked for a log level)"
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_trigger_tool_change",
                "Adds or removes the tool test_dynamic_tool",
                |cx: RequestContext| async move {
                    let server = cx.server();
                    if server.remove_tool("test_dynamic_tool") {
                        return Ok::<_, McpError>("removed test_dynamic_tool".to_owned());
                    }
                    server
                        .define_tool(
                            tool("test_dynamic_tool", "Added at run time", || async {
                                "dynamic"
                            })
                            .input_schema(no_args()),
                        )
                        .map_err(|err| McpError::internal(err.to_string()))?;
                    Ok("added test_dynamic_tool".to_owned())
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_trigger_prompt_change",
                "Adds or removes the prompt test_dynamic_prompt",
                |cx: RequestContext| async move {
                    let server = cx.server();
                    if server.remove_prompt("test_dynamic_prompt") {
                        return Ok::<_, McpError>("removed test_dynamic_prompt".to_owned());
                    }
                    server
                        .define_prompt(prompt(
                            "test_dynamic_prompt",
                            "Added at run time",
                            |_cx: RequestContext| async { PromptMessage::user_text("dynamic") },
                        ))
                        .map_err(|err| McpError::internal(err.to_string()))?;
                    Ok("added test_dynamic_prompt".to_owned())
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_header_params",
                "Echoes arguments that HTTP clients mirror in Mcp-Param-* headers",
                |Arguments(args): Arguments| async move { Value::Object(args).to_string() },
            )
            .input_schema(
                json!({
                    "type": "object",
                    "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"},
                        "priority": {"type": "integer", "x-mcp-header": "Priority"},
                        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                        "note": {"type": "string"}
                    },
                    "required": ["region"]
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        )
}

fn server(
    state_key: Option<&str>,
    task_store: Option<Arc<dyn actix_mcp::TaskStore>>,
) -> Result<Server, actix_mcp::BuildError> {
    let server = Server::builder("actix-mcp-conformance", env!("CARGO_PKG_VERSION"))
        .tool(
            tool("test_simple_text", "Returns a simple text response", |_cx: RequestContext| async {
                "This is a simple text response for testing."
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_image_content", "Returns an image", |_cx: RequestContext| async { ContentBlock::image(PNG, "image/png") })
                .input_schema(no_args()),
        )
        .tool(
            tool("test_audio_content", "Returns audio", |_cx: RequestContext| async { ContentBlock::audio(WAV, "audio/wav") })
                .input_schema(no_args()),
        )
        .tool(
            tool("test_embedded_resource", "Returns an embedded resource", |_cx: RequestContext| async {
                ContentBlock::resource(ResourceContents::text(
                    "test://embedded-resource",
                    Some("text/plain".into()),
                    "This is an embedded resource content.",
                ))
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_multiple_content_types", "Returns text, an image and a resource", |_cx: RequestContext| async {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG, "image/png"),
                    ContentBlock::resource(ResourceContents::text(
                        "test://mixed-content-resource",
                        Some("application/json".into()),
                        r#"{"test":"data","value":123}"#,
                    )),
                ]
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_tool_with_logging", "Logs while it runs", |cx: RequestContext| async move {
                for (i, message) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    cx.log(LoggingLevel::Info, *message, Some("conformance"));
                }
                "Tool with logging executed successfully"
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_tool_with_progress", "Reports progress while it runs", |cx: RequestContext| async move {
                for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    cx.progress(progress, Some(100.0), Some("working"));
                }
                "Tool with progress executed successfully"
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_error_handling", "Always fails", |_cx: RequestContext| async {
                CallToolResult::error_text("This tool intentionally returns an error for testing")
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_reconnection", "Closes its stream and answers after the client resumes", |cx: RequestContext| async move {
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
            })
            .input_schema(no_args()),
        )
        .tool(tool(
            "test_sampling",
            "Asks the client to sample an LLM",
            |Params(args): Params<PromptArg>, cx: RequestContext| async move {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": args.prompt}}],
                    "maxTokens": 100
                }))?;
                let result = cx.create_message(params).await?;
                let text = result
                    .content
                    .as_slice()
                    .iter()
                    .find_map(|block| match block {
                        SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                Ok::<_, McpError>(format!("LLM response: {text}"))
            },
        ))
        .tool(tool(
            "test_elicitation",
            "Asks the user for input",
            |Params(args): Params<MessageArg>, cx: RequestContext| async move {
                let requested = schema(json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }));
                let result = cx.elicit_form(args.message, requested).await?;
                Ok::<_, McpError>(elicitation_text("User response", &result))
            },
        ))
        .tool(
            tool("test_elicitation_sep1034_defaults", "Elicitation with defaults", |cx: RequestContext| async move {
                let requested = schema(json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true}
                    }
                }));
                let result = cx.elicit_form("Please review the defaults", requested).await?;
                Ok::<_, McpError>(elicitation_text("Elicitation completed", &result))
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("test_elicitation_sep1330_enums", "Elicitation with every enum form", |cx: RequestContext| async move {
                let requested = schema(json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]}}
                    }
                }));
                let result = cx.elicit_form("Please choose", requested).await?;
                Ok::<_, McpError>(elicitation_text("Elicitation completed", &result))
            })
            .input_schema(no_args()),
        )
        .tool(
            tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", |Arguments(args): Arguments| async move {
                format!("Received: {}", Value::Object(args))
            })
            .input_schema(
                json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "$defs": {
                        "address": {
                            "$anchor": "addressDef",
                            "type": "object",
                            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                        }
                    },
                    "properties": {
                        "name": {"type": "string"},
                        "address": {"$ref": "#/$defs/address"},
                        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                        "phone": {"type": "string"},
                        "email": {"type": "string"}
                    },
                    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                    "then": {"required": ["phone"]},
                    "else": {"required": ["email"]},
                    "additionalProperties": false
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        )
        .resource(resource(
            Resource::new("test://static-text", "static-text").with_mime_type("text/plain"),
            |_cx: RequestContext| async { "This is the content of the static text resource." },
        ))
        .resource(resource(
            Resource::new("test://static-binary", "static-binary").with_mime_type("image/png"),
            |_cx: RequestContext| async {
                ResourceContents::blob("test://static-binary", Some("image/png".into()), PNG)
            },
        ))
        .resource(ResourceDef::from(Resource::new("test://watched-resource", "watched-resource").with_mime_type("text/plain")))
        .read_resource(|ResourceUri(uri): ResourceUri| async move {
            if uri == "test://watched-resource" {
                Ok("Watched resource content".to_owned())
            } else {
                Err(McpError::resource_not_found(&uri))
            }
        })
        .resource_template(resource_template(
            ResourceTemplate { mime_type: Some("application/json".into()), ..ResourceTemplate::new("test://template/{id}/data", "template") },
            |vars: UriVars| async move {
                let id = vars.get("id").unwrap_or_default().to_owned();
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
            },
        ))
        .prompt(prompt("test_simple_prompt", "A simple prompt", |_cx: RequestContext| async {
            PromptMessage::user_text("This is a simple prompt for testing.")
        }))
        .prompt(prompt("test_prompt_with_arguments", "A prompt with arguments", |Params(a): Params<TwoArgs>| async move {
            PromptMessage::user_text(format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2))
        }))
        .prompt(prompt(
            "test_prompt_with_embedded_resource",
            "A prompt with an embedded resource",
            |Params(a): Params<ResourceUriArg>| async move {
                vec![
                    PromptMessage::new(
                        Role::User,
                        ContentBlock::resource(ResourceContents::text(
                            a.resource_uri,
                            Some("text/plain".into()),
                            "Embedded resource content for testing.",
                        )),
                    ),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]
            },
        ))
        .prompt(prompt("test_prompt_with_image", "A prompt with an image", |_cx: RequestContext| async {
            vec![
                PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                PromptMessage::user_text("Please analyze the image above."),
            ]
        }))
        .completion(|params, _cx| async move {
            let candidates = ["test", "testing", "testValue1", "testValue2"];
            let values: Vec<String> =
                candidates.iter().filter(|c| c.starts_with(&params.argument.value)).map(|c| (*c).to_owned()).collect();
            let total = values.len() as u64;
            Ok(CompleteResult { completion: Completion { values, total: Some(total), has_more: Some(false) }, meta: None })
        });
    let server = stateless_fixtures(server);
    let mut server = mrtr_fixtures(server);
    if let Some(key) = state_key {
        server = server.request_state_key_hex("cluster", key);
    }
    let server = tasks_fixtures(server, task_store);
    server.build()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let cluster = match &cli.redis {
        Some(url) => Some(on_redis(url).await?),
        None => None,
    };
    let server = server(
        cli.state_key.as_deref(),
        cluster.as_ref().map(|(_, tasks)| tasks.clone()),
    )
    .map_err(std::io::Error::other)?;
    let mut mcp = server.http("/mcp").retry(Duration::from_millis(500));
    if let Some((cluster, _)) = cluster {
        tracing::info!(node = %cluster.node_id(), "serving as a node of a cluster");
        mcp = mcp.cluster(cluster);
    }
    tracing::info!(port = cli.port, "conformance server listening");
    actix_web::HttpServer::new(move || actix_web::App::new().configure(mcp.configure()))
        .tcp_nodelay(true)
        .bind(("127.0.0.1", cli.port))?
        .run()
        .await
}

/// The multi round-trip (MRTR, SEP-2322) fixtures of the 2026-07-28 set, in both styles:
/// explicit (the handler answers `input_required` and reads the retry's answers) and implicit
/// (the handler asks as it would in a session; the SDK turns the ask into a round and resumes
/// the handler where it waited). Every `requestState` is sealed by the SDK.
fn mrtr_fixtures(builder: actix_mcp::ServerBuilder) -> actix_mcp::ServerBuilder {
    use actix_mcp::protocol::{
        ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult,
    };

    fn form(message: &str, property: &str, kind: &str) -> ElicitRequestParams {
        ElicitRequestParams::form(
            message,
            schema(json!({
                "type": "object",
                "properties": { property: { "type": kind } },
                "required": [property]
            })),
        )
    }
    fn field(result: &ElicitResult, name: &str) -> String {
        result
            .content
            .as_ref()
            .and_then(|c| c.get(name))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .unwrap_or_default()
    }
    fn sampling(text: &str, max_tokens: u32) -> Result<CreateMessageRequestParams, McpError> {
        Ok(serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens
        }))?)
    }
    fn sampled(result: &actix_mcp::protocol::CreateMessageResult) -> String {
        result
            .content
            .as_slice()
            .iter()
            .find_map(|block| match block {
                SamplingMessageContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    builder
        // Explicit style: a new round until `user_name` is answered.
        .tool(
            tool(
                "test_input_required_result_elicitation",
                "Asks for the user's name (input_required)",
                |cx: RequestContext| async move {
                    match cx.input_response_as::<ElicitResult>("user_name") {
                        Some(answer) => Ok(format!("Hello, {}!", field(&answer, "name"))),
                        None => Err(McpError::input_required(InputRequiredResult::ask(
                            "user_name",
                            InputRequest::elicitation(&form(
                                "What is your name?",
                                "name",
                                "string",
                            )),
                        ))),
                    }
                },
            )
            .input_schema(no_args()),
        )
        // Implicit style: the same code would send `sampling/createMessage` in a session.
        .tool(
            tool(
                "test_input_required_result_sampling",
                "Samples an LLM (input_required)",
                |cx: RequestContext| async move {
                    let result = cx
                        .create_message(sampling("What is the capital of France?", 100)?)
                        .await?;
                    Ok::<_, McpError>(format!("LLM response: {}", sampled(&result)))
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_input_required_result_list_roots",
                "Lists the client's roots (input_required)",
                |cx: RequestContext| async move {
                    let roots = cx.list_roots().await?;
                    let uris: Vec<&str> =
                        roots.roots.iter().map(|root| root.uri.as_str()).collect();
                    Ok::<_, McpError>(format!("Roots: {}", uris.join(", ")))
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_input_required_result_request_state",
                "Round trips its own state",
                |cx: RequestContext| async move {
                    match (
                        cx.input_response_as::<ElicitResult>("confirm"),
                        cx.request_state(),
                    ) {
                        (Some(_), Some("awaiting-confirm")) => Ok("state-ok: confirmed".to_owned()),
                        _ => Err(McpError::input_required(
                            InputRequiredResult::ask(
                                "confirm",
                                InputRequest::elicitation(&form("Please confirm", "ok", "boolean")),
                            )
                            .with_state("awaiting-confirm"),
                        )),
                    }
                },
            )
            .input_schema(no_args()),
        )
        // Implicit style, three asks at once: one round with three input requests.
        .tool(
            tool(
                "test_input_required_result_multiple_inputs",
                "Asks for three inputs in one round",
                |cx: RequestContext| async move {
                    let (name, greeting, roots) = futures::join!(
                        cx.elicit(form("What is your name?", "name", "string")),
                        cx.create_message(sampling("Generate a greeting", 50)?),
                        cx.list_roots(),
                    );
                    let (name, greeting, roots) = (name?, greeting?, roots?);
                    Ok::<_, McpError>(format!(
                        "{} {}: {} roots",
                        sampled(&greeting),
                        field(&name, "name"),
                        roots.roots.len()
                    ))
                },
            )
            .input_schema(no_args()),
        )
        // Implicit style, two rounds: the handler resumes after each.
        .tool(
            tool(
                "test_input_required_result_multi_round",
                "Asks twice, one round each",
                |cx: RequestContext| async move {
                    let name = cx
                        .elicit(form("Step 1: What is your name?", "name", "string"))
                        .await?;
                    let color = cx
                        .elicit(form(
                            "Step 2: What is your favorite color?",
                            "color",
                            "string",
                        ))
                        .await?;
                    Ok::<_, McpError>(format!(
                        "{} likes {}",
                        field(&name, "name"),
                        field(&color, "color")
                    ))
                },
            )
            .input_schema(no_args()),
        )
        .tool(
            tool(
                "test_input_required_result_tampered_state",
                "Refuses a tampered requestState",
                |cx: RequestContext| async move {
                    match (
                        cx.input_response_as::<ElicitResult>("confirm"),
                        cx.request_state(),
                    ) {
                        (Some(_), Some("integrity-checked")) => Ok("state verified".to_owned()),
                        _ => Err(McpError::input_required(
                            InputRequiredResult::ask(
                                "confirm",
                                InputRequest::elicitation(&form("Please confirm", "ok", "boolean")),
                            )
                            .with_state("integrity-checked"),
                        )),
                    }
                },
            )
            .input_schema(no_args()),
        )
        // Explicit style: asks only for what this request's capabilities declare.
        .tool(
            tool(
                "test_input_required_result_capabilities",
                "Asks only for declared input kinds",
                |cx: RequestContext| async move {
                    if cx
                        .input_responses()
                        .is_some_and(|answers| !answers.is_empty())
                    {
                        return Ok("inputs received".to_owned());
                    }
                    let caps = cx.client_capabilities();
                    let mut round = InputRequiredResult::default();
                    if caps.supports_elicitation_form() {
                        round = round.and(
                            "user_name",
                            InputRequest::elicitation(&form(
                                "What is your name?",
                                "name",
                                "string",
                            )),
                        );
                    }
                    if caps.supports_sampling() {
                        round = round.and(
                            "greeting",
                            InputRequest::sampling(&sampling("Generate a greeting", 50)?),
                        );
                    }
                    if caps.supports_roots() {
                        round = round.and("client_roots", InputRequest::list_roots());
                    }
                    if round.input_requests.is_none() {
                        return Ok("no input kinds declared".to_owned());
                    }
                    Err(McpError::input_required(round))
                },
            )
            .input_schema(no_args()),
        )
        // Implicit style: the response stream never carries a server-to-client request.
        .tool(
            tool(
                "test_streaming_elicitation",
                "Elicits through input_required, never inline",
                |cx: RequestContext| async move {
                    cx.progress(0.0, Some(1.0), Some("asking"));
                    let answer = cx
                        .elicit(form("What is your name?", "name", "string"))
                        .await?;
                    Ok::<_, McpError>(format!("Hello, {}!", field(&answer, "name")))
                },
            )
            .input_schema(no_args()),
        )
        .prompt(prompt(
            "test_input_required_result_prompt",
            "A prompt that asks for context first",
            |cx: RequestContext| async move {
                match cx.input_response_as::<ElicitResult>("user_context") {
                    Some(answer) => Ok(PromptMessage::user_text(format!(
                        "Use this context: {}",
                        field(&answer, "context")
                    ))),
                    None => Err(McpError::input_required(InputRequiredResult::ask(
                        "user_context",
                        InputRequest::elicitation(&form(
                            "What context should the prompt use?",
                            "context",
                            "string",
                        )),
                    ))),
                }
            },
        ))
}

/// The fixtures of the Tasks extension scenarios (`tasks-*`, SEP-2663), 2026-07-28 only.
fn tasks_fixtures(
    builder: actix_mcp::ServerBuilder,
    store: Option<Arc<dyn actix_mcp::TaskStore>>,
) -> actix_mcp::ServerBuilder {
    use actix_mcp::TaskConfig;
    use actix_mcp::protocol::{
        ElicitAction, ElicitRequestParams, ElicitResult, InputRequest, InputRequiredResult,
        TaskSupport,
    };

    /// Arguments of `greet`.
    #[derive(Deserialize, JsonSchema)]
    struct GreetArgs {
        name: String,
    }

    /// Arguments of `slow_compute`.
    #[derive(Deserialize, JsonSchema)]
    struct SlowComputeArgs {
        /// How long the computation takes, in seconds.
        seconds: f64,
        /// A label echoed in the result.
        label: Option<String>,
    }

    /// Arguments of `confirm_delete`.
    #[derive(Deserialize, JsonSchema)]
    struct FilenameArg {
        filename: String,
    }

    /// Waits `seconds`, or until the call (or its task) is cancelled: `false` then.
    async fn work_for(cx: &RequestContext, seconds: f64) -> bool {
        let duration = Duration::from_secs_f64(seconds.clamp(0.0, 3_600.0));
        tokio::select! {
            () = tokio::time::sleep(duration) => true,
            () = cx.cancelled() => false,
        }
    }

    /// Asks for a form (an MRTR input request, or a task's input request inside a task).
    fn ask(key: &str, message: &str, properties: Value) -> InputRequiredResult {
        let params = ElicitRequestParams::form(
            message,
            schema(json!({"type": "object", "properties": properties})),
        );
        InputRequiredResult::ask(key, InputRequest::elicitation(&params))
    }

    /// The accepted content of the answer to `key`, if the user accepted.
    fn accepted(cx: &RequestContext, key: &str) -> Option<serde_json::Map<String, Value>> {
        cx.input_response_as::<ElicitResult>(key)
            .filter(|answer| answer.action == ElicitAction::Accept)
            .map(|answer| answer.content.unwrap_or_default())
    }

    builder
        .tasks({
            let config = TaskConfig::default()
                .ttl(Duration::from_secs(300))
                .poll_interval(Duration::from_millis(200));
            match store {
                Some(store) => config.store(store),
                None => config,
            }
        })
        .tool(tool("greet", "Greets someone (never a task)", |Params(args): Params<GreetArgs>| async move {
            format!("Hello, {}!", args.name)
        }))
        .tool(
            tool("slow_compute", "Computes for `seconds` seconds; may run as a task", |Params(args): Params<SlowComputeArgs>, cx: RequestContext| async move {
                let label = args.label.unwrap_or_else(|| "computation".to_owned());
                if work_for(&cx, args.seconds).await {
                    Ok(format!("Computed {label} in {} s", args.seconds))
                } else {
                    Err(McpError::tool(format!("{label} was cancelled")))
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            tool("failing_job", "Fails with a tool error after about a second; always a task", |cx: RequestContext| async move {
                work_for(&cx, 1.0).await;
                Err::<String, _>(McpError::tool("the job failed"))
            })
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
        .tool(
            tool("protocol_error_job", "Crashes after a moment: its task fails with a JSON-RPC error", |cx: RequestContext| async move {
                work_for(&cx, 0.2).await;
                if !cx.is_cancelled() {
                    panic!("protocol_error_job crashed on purpose");
                }
                "cancelled"
            })
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
        .tool(
            tool("confirm_delete", "Looks the file up, then asks for confirmation before deleting it", |Params(args): Params<FilenameArg>, cx: RequestContext| async move {
                // The lookup is the work that makes this call a task; the question comes after.
                work_for(&cx, 0.05).await;
                match accepted(&cx, "confirm") {
                    None if cx.input_response("confirm").is_none() => Err(McpError::input_required(ask(
                        "confirm",
                        &format!("Delete {}?", args.filename),
                        json!({"confirm": {"type": "boolean"}}),
                    ))),
                    Some(content) if content.get("confirm") == Some(&Value::Bool(true)) => Ok(format!("Deleted {}", args.filename)),
                    _ => Ok(format!("Kept {}", args.filename)),
                }
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            tool("multi_input", "Asks two questions at once, then answers", |cx: RequestContext| async move {
                work_for(&cx, 0.05).await;
                match (accepted(&cx, "name"), accepted(&cx, "confirm")) {
                    (Some(name), Some(confirm)) => Ok(format!(
                        "name={}, confirm={}",
                        name.get("name").cloned().unwrap_or(Value::Null),
                        confirm.get("confirm").cloned().unwrap_or(Value::Null)
                    )),
                    _ => Err(McpError::input_required(
                        ask("name", "Your name?", json!({"name": {"type": "string"}})).and(
                            "confirm",
                            InputRequest::elicitation(&ElicitRequestParams::form(
                                "Proceed?",
                                schema(json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}})),
                            )),
                        ),
                    )),
                }
            })
            .input_schema(no_args())
            .task_support(TaskSupport::Optional),
        )
        .tool(
            tool("test_tool_with_task", "Asks for a name (MRTR), then works on it as a task", |cx: RequestContext| async move {
                let Some(answer) = accepted(&cx, "user_name") else {
                    return Err(McpError::input_required(ask("user_name", "What is your name?", json!({"name": {"type": "string"}}))));
                };
                let name = answer.get("name").and_then(Value::as_str).unwrap_or("stranger").to_owned();
                work_for(&cx, 0.5).await;
                Ok(format!("Hello, {name}! (task {})", cx.task_id().unwrap_or("none")))
            })
            .input_schema(no_args())
            .task_support(TaskSupport::Required),
        )
}
