//! The fixtures of the 2025-11-25 set, which the 2026-07-28 set calls too: tools of every
//! content type, logging, progress, errors, a stream closed for the client to resume, sampling
//! and elicitation (with defaults and every enum form), a JSON Schema 2020-12 input; static,
//! watched and templated resources; prompts with arguments, an embedded resource and an image;
//! and completion.

use std::time::Duration;

use actix_mcp::prelude::*;
use actix_mcp::protocol::{
    CompleteResult, Completion, CreateMessageRequestParams, LoggingLevel,
    SamplingMessageContentBlock,
};
use actix_mcp::{Arguments, ResourceDef, ServerBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{no_args, schema};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

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

/// Every fixture of the 2025-11-25 set, on `builder`.
pub(crate) fn base_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            ToolDef::new("test_simple_text", |_cx: RequestContext| async {
                "This is a simple text response for testing."
            }).description("Returns a simple text response")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_image_content", |_cx: RequestContext| async { ContentBlock::image(PNG, "image/png") }).description("Returns an image")
                .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_audio_content", |_cx: RequestContext| async { ContentBlock::audio(WAV, "audio/wav") }).description("Returns audio")
                .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_embedded_resource", |_cx: RequestContext| async {
                ContentBlock::resource(ResourceContents::text(
                    "test://embedded-resource",
                    Some("text/plain".into()),
                    "This is an embedded resource content.",
                ))
            }).description("Returns an embedded resource")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_multiple_content_types", |_cx: RequestContext| async {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG, "image/png"),
                    ContentBlock::resource(ResourceContents::text(
                        "test://mixed-content-resource",
                        Some("application/json".into()),
                        r#"{"test":"data","value":123}"#,
                    )),
                ]
            }).description("Returns text, an image and a resource")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_tool_with_logging", |cx: RequestContext| async move {
                for (i, message) in ["Tool execution started", "Tool processing data", "Tool execution completed"].iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    cx.log(LogMessage::new(LoggingLevel::Info, *message).logger("conformance"));
                }
                "Tool with logging executed successfully"
            }).description("Logs while it runs")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_tool_with_progress", |cx: RequestContext| async move {
                for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    cx.progress(Progress::new(progress).total(100.0).message("working"));
                }
                "Tool with progress executed successfully"
            }).description("Reports progress while it runs")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_error_handling", |_cx: RequestContext| async {
                CallToolResult::error_text("This tool intentionally returns an error for testing")
            }).description("Always fails")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_reconnection", |cx: RequestContext| async move {
                cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(100)).await;
                "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."
            }).description("Closes its stream and answers after the client resumes")
            .input_schema(no_args()),
        )
        .tool(ToolDef::new(
            "test_sampling",
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
        ).description("Asks the client to sample an LLM"))
        .tool(ToolDef::new(
            "test_elicitation",
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
        ).description("Asks the user for input"))
        .tool(
            ToolDef::new("test_elicitation_sep1034_defaults", |cx: RequestContext| async move {
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
            }).description("Elicitation with defaults")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("test_elicitation_sep1330_enums", |cx: RequestContext| async move {
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
            }).description("Elicitation with every enum form")
            .input_schema(no_args()),
        )
        .tool(
            ToolDef::new("json_schema_2020_12_tool", |Arguments(args): Arguments| async move {
                format!("Received: {}", Value::Object(args))
            }).description("Tool with JSON Schema 2020-12 features")
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
        .resource(ResourceDef::new("test://static-text", "static-text", |_cx: RequestContext| async { "This is the content of the static text resource." }).mime_type("text/plain"))
        .resource(ResourceDef::new("test://static-binary", "static-binary", |_cx: RequestContext| async {
                ResourceContents::blob("test://static-binary", Some("image/png".into()), PNG)
            }).mime_type("image/png"))
        .resource(ResourceDef::from(Resource::new("test://watched-resource", "watched-resource").with_mime_type("text/plain")))
        .read_resource(|ResourceUri(uri): ResourceUri| async move {
            if uri == "test://watched-resource" {
                Ok("Watched resource content".to_owned())
            } else {
                Err(McpError::resource_not_found(&uri))
            }
        })
        .resource_template(ResourceTemplateDef::new("test://template/{id}/data", "template", |vars: UriVars| async move {
                let id = vars.get("id").unwrap_or_default().to_owned();
                json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
            }).mime_type("application/json"))
        .prompt(PromptDef::new("test_simple_prompt", |_cx: RequestContext| async {
            PromptMessage::user_text("This is a simple prompt for testing.")
        }).description("A simple prompt"))
        .prompt(PromptDef::new("test_prompt_with_arguments", |Params(a): Params<TwoArgs>| async move {
            PromptMessage::user_text(format!("Prompt with arguments: arg1='{}', arg2='{}'", a.arg1, a.arg2))
        }).description("A prompt with arguments"))
        .prompt(PromptDef::new(
            "test_prompt_with_embedded_resource",
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
        ).description("A prompt with an embedded resource"))
        .prompt(PromptDef::new("test_prompt_with_image", |_cx: RequestContext| async {
            vec![
                PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                PromptMessage::user_text("Please analyze the image above."),
            ]
        }).description("A prompt with an image"))
        .completion(|params, _cx| async move {
            let candidates = ["test", "testing", "testValue1", "testValue2"];
            let values: Vec<String> =
                candidates.iter().filter(|c| c.starts_with(&params.argument.value)).map(|c| (*c).to_owned()).collect();
            let total = values.len() as u64;
            Ok(CompleteResult { completion: Completion { values, total: Some(total), has_more: Some(false) }, meta: None })
        })
}
