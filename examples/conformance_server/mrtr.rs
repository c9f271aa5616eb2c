//! The multi round-trip (MRTR, SEP-2322) fixtures of the 2026-07-28 set, in both styles.

use actix_mcp::prelude::*;
use actix_mcp::protocol::{CreateMessageRequestParams, SamplingMessageContentBlock};
use serde_json::json;

use super::{no_args, schema};

/// The multi round-trip (MRTR, SEP-2322) fixtures of the 2026-07-28 set, in both styles:
/// explicit (the handler answers `input_required` and reads the retry's answers) and implicit
/// (the handler asks as it would in a session; the SDK turns the ask into a round and resumes
/// the handler where it waited). Every `requestState` is sealed by the SDK.
pub(crate) fn mrtr_fixtures(builder: actix_mcp::ServerBuilder) -> actix_mcp::ServerBuilder {
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
            ToolDef::new(
                "test_input_required_result_elicitation",
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
            .description("Asks for the user's name (input_required)")
            .input_schema(no_args()),
        )
        // Implicit style: the same code would send `sampling/createMessage` in a session.
        .tool(
            ToolDef::new(
                "test_input_required_result_sampling",
                |cx: RequestContext| async move {
                    let result = cx
                        .create_message(sampling("What is the capital of France?", 100)?)
                        .await?;
                    Ok::<_, McpError>(format!("LLM response: {}", sampled(&result)))
                },
            )
            .description("Samples an LLM (input_required)")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_input_required_result_list_roots",
                |cx: RequestContext| async move {
                    let roots = cx.list_roots().await?;
                    let uris: Vec<&str> =
                        roots.roots.iter().map(|root| root.uri.as_str()).collect();
                    Ok::<_, McpError>(format!("Roots: {}", uris.join(", ")))
                },
            )
            .description("Lists the client's roots (input_required)")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_input_required_result_request_state",
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
            .description("Round trips its own state")
            .input_schema(no_args()),
        )
        // Implicit style, three asks at once: one round with three input requests.
        .tool(
            ToolDef::new(
                "test_input_required_result_multiple_inputs",
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
            .description("Asks for three inputs in one round")
            .input_schema(no_args()),
        )
        // Implicit style, two rounds: the handler resumes after each.
        .tool(
            ToolDef::new(
                "test_input_required_result_multi_round",
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
            .description("Asks twice, one round each")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new(
                "test_input_required_result_tampered_state",
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
            .description("Refuses a tampered requestState")
            .input_schema(no_args()),
        )
        // Explicit style: asks only for what this request's capabilities declare.
        .tool(
            ToolDef::new(
                "test_input_required_result_capabilities",
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
            .description("Asks only for declared input kinds")
            .input_schema(no_args()),
        )
        // Implicit style: the response stream never carries a server-to-client request.
        .tool(
            ToolDef::new(
                "test_streaming_elicitation",
                |cx: RequestContext| async move {
                    cx.progress(Progress::new(0.0).total(1.0).message("asking"));
                    let answer = cx
                        .elicit(form("What is your name?", "name", "string"))
                        .await?;
                    Ok::<_, McpError>(format!("Hello, {}!", field(&answer, "name")))
                },
            )
            .description("Elicits through input_required, never inline")
            .input_schema(no_args()),
        )
        .prompt(
            PromptDef::new(
                "test_input_required_result_prompt",
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
            )
            .description("A prompt that asks for context first"),
        )
}
