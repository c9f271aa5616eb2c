//! Version adapters of `actix_mcp::protocol`: values adapted with [`ForVersion::adapt_to`]
//! validate against each older revision's schema (published and strict, see
//! [`common::golden`]), the oldest schema rejects them unadapted, and what a revision lacks is
//! dropped or rewritten as text.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use actix_mcp::protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use common::golden::{Schema, fixture};

type Adapt = fn(&Value, ProtocolVersion) -> Value;

fn adapt<T: ForVersion + Serialize + DeserializeOwned>(
    fixture: &Value,
    v: ProtocolVersion,
) -> Value {
    let mut typed: T = serde_json::from_value(fixture.clone()).unwrap();
    typed.adapt_to(v);
    serde_json::to_value(&typed).unwrap()
}

/// Fixtures fed through [`ForVersion`], with their Rust type.
fn adapted_cases() -> Vec<(&'static str, &'static str, Adapt)> {
    vec![
        ("InitializeResult", "full", adapt::<InitializeResult>),
        ("Implementation", "full", adapt::<Implementation>),
        ("ServerCapabilities", "full", adapt::<ServerCapabilities>),
        ("ClientCapabilities", "full", adapt::<ClientCapabilities>),
        ("Tool", "full", adapt::<Tool>),
        ("ListToolsResult", "full", adapt::<ListToolsResult>),
        ("CallToolResult", "full", adapt::<CallToolResult>),
        ("CallToolResult", "error", adapt::<CallToolResult>),
        ("ContentBlock", "text", adapt::<ContentBlock>),
        ("ContentBlock", "image", adapt::<ContentBlock>),
        ("ContentBlock", "audio", adapt::<ContentBlock>),
        ("ContentBlock", "resource_link", adapt::<ContentBlock>),
        ("ContentBlock", "resource_text", adapt::<ContentBlock>),
        ("ContentBlock", "resource_blob", adapt::<ContentBlock>),
        ("Prompt", "full", adapt::<Prompt>),
        ("ListPromptsResult", "full", adapt::<ListPromptsResult>),
        ("GetPromptResult", "full", adapt::<GetPromptResult>),
        ("Resource", "full", adapt::<Resource>),
        ("ResourceTemplate", "full", adapt::<ResourceTemplate>),
        ("ListResourcesResult", "full", adapt::<ListResourcesResult>),
        (
            "ListResourceTemplatesResult",
            "full",
            adapt::<ListResourceTemplatesResult>,
        ),
        ("ReadResourceResult", "full", adapt::<ReadResourceResult>),
        (
            "CreateMessageRequestParams",
            "full",
            adapt::<CreateMessageRequestParams>,
        ),
        (
            "CreateMessageRequestParams",
            "minimal",
            adapt::<CreateMessageRequestParams>,
        ),
        ("CreateMessageResult", "text", adapt::<CreateMessageResult>),
        (
            "CreateMessageResult",
            "tool_use",
            adapt::<CreateMessageResult>,
        ),
    ]
}

/// Where a type lives in a given revision's schema.
fn pointer_for(schema: &Schema, dir: &str) -> String {
    let old = schema.version < ProtocolVersion::V2025_06_18;
    match dir {
        "ContentBlock" if old => schema.def("/definitions/CallToolResult/properties/content/items"),
        "CreateMessageRequestParams" if schema.version < ProtocolVersion::V2025_11_25 => {
            schema.def("/definitions/CreateMessageRequest/properties/params")
        }
        other => schema.def(other),
    }
}

fn check_version(v: ProtocolVersion) {
    let mut schema = Schema::load(v);
    let mut failures = Vec::new();
    for (dir, case, adapt) in adapted_cases() {
        let adapted = adapt(&fixture(dir, case), v);
        let pointer = pointer_for(&schema, dir);
        if let Err(e) = schema.check(&pointer, &adapted) {
            failures.push(format!("{dir}/{case} adapted to {v}: {adapted}\n{e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn adapted_values_match_the_2024_11_05_schema() {
    check_version(ProtocolVersion::V2024_11_05);
}

#[test]
fn adapted_values_match_the_2025_03_26_schema() {
    check_version(ProtocolVersion::V2025_03_26);
}

#[test]
fn adapted_values_match_the_2025_06_18_schema() {
    check_version(ProtocolVersion::V2025_06_18);
}

#[test]
fn adapted_values_match_the_2025_11_25_schema() {
    check_version(ProtocolVersion::V2025_11_25);
}

/// Without adapting, fully populated values are rejected by the oldest schema, so the
/// per-version tests above are not vacuous.
#[test]
fn unadapted_values_fail_the_2024_11_05_schema() {
    let mut schema = Schema::load(ProtocolVersion::V2024_11_05);
    let must_fail = [
        ("Implementation", "full"),
        ("ServerCapabilities", "full"),
        ("Tool", "full"),
        ("CallToolResult", "full"),
        ("ContentBlock", "audio"),
        ("ContentBlock", "resource_link"),
        ("ContentBlock", "text"),
        ("Prompt", "full"),
        ("Resource", "full"),
        ("CreateMessageRequestParams", "full"),
    ];
    for (dir, case) in must_fail {
        let pointer = pointer_for(&schema, dir);
        let raw = fixture(dir, case);
        assert!(
            schema.check(&pointer, &raw).is_err(),
            "{dir}/{case} unexpectedly valid for 2024-11-05"
        );
    }
}

#[test]
fn adapting_to_the_latest_stateful_revision_changes_nothing() {
    for (dir, case, adapt) in adapted_cases() {
        let original = fixture(dir, case);
        assert_eq!(
            adapt(&original, ProtocolVersion::LATEST_WITH_HANDSHAKE),
            original,
            "{dir}/{case}"
        );
    }
}

#[test]
fn old_revisions_get_text_for_unsupported_content() {
    let audio = adapt::<ContentBlock>(
        &fixture("ContentBlock", "audio"),
        ProtocolVersion::V2024_11_05,
    );
    assert_eq!(audio["type"], "text");
    assert_eq!(audio["text"], "[audio: audio/wav]");
    assert_eq!(
        audio["annotations"],
        json!({"audience": ["user", "assistant"], "priority": 0.5})
    );

    let link = adapt::<ContentBlock>(
        &fixture("ContentBlock", "resource_link"),
        ProtocolVersion::V2025_03_26,
    );
    assert_eq!(
        link,
        json!({"type": "text", "text": "file:///project/src/main.rs", "annotations": {"audience": ["user", "assistant"], "priority": 0.5}})
    );

    let kept = adapt::<ContentBlock>(
        &fixture("ContentBlock", "audio"),
        ProtocolVersion::V2025_03_26,
    );
    assert_eq!(kept["type"], "audio");
    assert!(kept.get("_meta").is_none());
}

#[test]
fn structured_content_falls_back_to_text_for_old_clients() {
    let mut result = CallToolResult {
        content: Vec::new(),
        structured_content: Some(json!({"t": 1})),
        is_error: None,
        meta: None,
    };
    result.adapt_to(ProtocolVersion::V2025_03_26);
    assert_eq!(result.structured_content, None);
    assert_eq!(result.content, vec![ContentBlock::text(r#"{"t":1}"#)]);

    let mut result = CallToolResult::from_structured(json!({"t": 1}));
    result.adapt_to(ProtocolVersion::V2025_03_26);
    assert_eq!(result.content.len(), 1);
}

#[test]
fn sampling_arrays_are_split_for_old_clients() {
    let params = adapt::<CreateMessageRequestParams>(
        &fixture("CreateMessageRequestParams", "full"),
        ProtocolVersion::V2025_06_18,
    );
    let messages = params["messages"].as_array().unwrap();
    // 1 single + 2 (text, tool_use) + 1 tool_result + 1 audio + 2 (image, text)
    assert_eq!(messages.len(), 7);
    assert!(messages.iter().all(|m| m["content"].is_object()));
    assert_eq!(messages[2]["content"]["type"], "text");
    assert!(
        messages[2]["content"]["text"]
            .as_str()
            .unwrap()
            .starts_with("[tool_use get_weather (call_1)")
    );
    assert!(
        params.get("tools").is_none()
            && params.get("toolChoice").is_none()
            && params.get("task").is_none()
    );
    assert_eq!(params["_meta"]["progressToken"], "p-1");

    let result = adapt::<CreateMessageResult>(
        &fixture("CreateMessageResult", "tool_use"),
        ProtocolVersion::V2025_06_18,
    );
    assert_eq!(result["content"]["type"], "text");
}

#[test]
fn implementation_and_capabilities_lose_newer_fields() {
    let info = adapt::<Implementation>(
        &fixture("Implementation", "full"),
        ProtocolVersion::V2025_06_18,
    );
    assert_eq!(
        info,
        json!({"name": "weather-server", "title": "Weather", "version": "1.2.3"})
    );
    let caps = adapt::<ServerCapabilities>(
        &fixture("ServerCapabilities", "full"),
        ProtocolVersion::V2024_11_05,
    );
    let keys: BTreeMap<_, _> = caps
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, _)| (k.clone(), ()))
        .collect();
    assert_eq!(
        keys.keys().map(String::as_str).collect::<Vec<_>>(),
        ["experimental", "logging", "prompts", "resources", "tools"]
    );
}
