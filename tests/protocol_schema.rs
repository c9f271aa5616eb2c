//! Golden-JSON and schema tests for `actix_mcp::protocol`.
//!
//! Every file `tests/fixtures/protocol/<TypeName>/<case>.json` is deserialized into its Rust
//! type, serialized again, compared with the file, and validated against the spec's JSON schema
//! (`tests/fixtures/protocol/_schema/<version>/schema.json`, copied verbatim from the spec
//! repository). Validation runs twice: against the schema as published, and against a strict
//! copy that also rejects properties the schema does not name, so a misspelt field fails.
//!
//! The method-name constants are checked against the same schema. The version adapters are
//! tested in `tests/protocol_versions.rs`; the schema loading and fixture helpers are in
//! [`common::golden`].
//!
//! `UPDATE_GOLDEN=1 cargo test --test protocol_schema` rewrites the fixtures from the Rust
//! re-serialization (review the diff before committing).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;

use actix_mcp::protocol::{self, *};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use common::golden::{FIXTURES, SCHEMA_DIR, Schema, cases, load, update_golden};

// ---------------------------------------------------------------------------------------------
// Fixture table
// ---------------------------------------------------------------------------------------------

type RoundTrip = fn(&Value) -> Result<Value, String>;

fn roundtrip<T: Serialize + DeserializeOwned>(fixture: &Value) -> Result<Value, String> {
    let typed: T =
        serde_json::from_value(fixture.clone()).map_err(|e| format!("deserialize: {e}"))?;
    serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))
}

/// A fixture directory: its Rust type, the schema types every case must match, and an extra
/// schema type chosen per case (for unions).
struct Entry {
    dir: &'static str,
    roundtrip: RoundTrip,
    defs: &'static [&'static str],
    per_case: fn(&Value) -> Option<&'static str>,
}

fn none(_: &Value) -> Option<&'static str> {
    None
}

fn content_def(v: &Value) -> Option<&'static str> {
    Some(match v["type"].as_str()? {
        "text" => "TextContent",
        "image" => "ImageContent",
        "audio" => "AudioContent",
        "resource_link" => "ResourceLink",
        "resource" => "EmbeddedResource",
        "tool_use" => "ToolUseContent",
        "tool_result" => "ToolResultContent",
        _ => return None,
    })
}

fn contents_def(v: &Value) -> Option<&'static str> {
    if v.get("blob").is_some() {
        Some("BlobResourceContents")
    } else {
        Some("TextResourceContents")
    }
}

fn elicit_def(v: &Value) -> Option<&'static str> {
    match v.get("mode").and_then(Value::as_str) {
        Some("url") => Some("ElicitRequestURLParams"),
        _ => Some("ElicitRequestFormParams"),
    }
}

fn primitive_def(v: &Value) -> Option<&'static str> {
    let has = |k: &str| v.get(k).is_some();
    Some(match v["type"].as_str()? {
        "string" if has("oneOf") => "TitledSingleSelectEnumSchema",
        "string" if has("enumNames") => "LegacyTitledEnumSchema",
        "string" if has("enum") => "UntitledSingleSelectEnumSchema",
        "string" => "StringSchema",
        "number" | "integer" => "NumberSchema",
        "boolean" => "BooleanSchema",
        "array" if v["items"].get("anyOf").is_some() => "TitledMultiSelectEnumSchema",
        "array" => "UntitledMultiSelectEnumSchema",
        _ => return None,
    })
}

macro_rules! entry {
    ($dir:literal, $ty:ty, [$($def:expr),* $(,)?]) => {
        entry!($dir, $ty, [$($def),*], none)
    };
    ($dir:literal, $ty:ty, [$($def:expr),* $(,)?], $per_case:expr) => {
        Entry { dir: $dir, roundtrip: roundtrip::<$ty>, defs: &[$($def),*], per_case: $per_case }
    };
}

fn table() -> Vec<Entry> {
    vec![
        // lifecycle
        entry!("Implementation", Implementation, ["Implementation"]),
        entry!("Icon", Icon, ["Icon"]),
        entry!(
            "ClientCapabilities",
            ClientCapabilities,
            ["ClientCapabilities"]
        ),
        entry!(
            "ServerCapabilities",
            ServerCapabilities,
            ["ServerCapabilities"]
        ),
        entry!(
            "InitializeRequestParams",
            InitializeRequestParams,
            ["InitializeRequestParams"]
        ),
        entry!("InitializeResult", InitializeResult, ["InitializeResult"]),
        // content
        entry!("Annotations", Annotations, ["Annotations"]),
        entry!("ContentBlock", ContentBlock, ["ContentBlock"], content_def),
        // resources
        entry!("Resource", Resource, ["Resource"]),
        entry!("ResourceTemplate", ResourceTemplate, ["ResourceTemplate"]),
        entry!("ResourceContents", ResourceContents, [], contents_def),
        entry!(
            "ListResourcesResult",
            ListResourcesResult,
            ["ListResourcesResult"]
        ),
        entry!(
            "ListResourceTemplatesResult",
            ListResourceTemplatesResult,
            ["ListResourceTemplatesResult"]
        ),
        entry!(
            "ReadResourceRequestParams",
            ReadResourceRequestParams,
            ["ReadResourceRequestParams"]
        ),
        entry!(
            "ReadResourceResult",
            ReadResourceResult,
            ["ReadResourceResult"]
        ),
        entry!(
            "SubscribeRequestParams",
            SubscribeRequestParams,
            ["SubscribeRequestParams"]
        ),
        entry!(
            "UnsubscribeRequestParams",
            UnsubscribeRequestParams,
            ["UnsubscribeRequestParams"]
        ),
        entry!(
            "ResourceUpdatedNotificationParams",
            ResourceUpdatedNotificationParams,
            ["ResourceUpdatedNotificationParams"]
        ),
        // tools
        entry!("Tool", Tool, ["Tool"]),
        entry!("ToolAnnotations", ToolAnnotations, ["ToolAnnotations"]),
        entry!("ListToolsResult", ListToolsResult, ["ListToolsResult"]),
        entry!(
            "CallToolRequestParams",
            CallToolRequestParams,
            ["CallToolRequestParams"]
        ),
        entry!("CallToolResult", CallToolResult, ["CallToolResult"]),
        // prompts
        entry!("Prompt", Prompt, ["Prompt"]),
        entry!("PromptArgument", PromptArgument, ["PromptArgument"]),
        entry!(
            "ListPromptsResult",
            ListPromptsResult,
            ["ListPromptsResult"]
        ),
        entry!(
            "GetPromptRequestParams",
            GetPromptRequestParams,
            ["GetPromptRequestParams"]
        ),
        entry!("GetPromptResult", GetPromptResult, ["GetPromptResult"]),
        entry!("PromptMessage", PromptMessage, ["PromptMessage"]),
        // completion
        entry!(
            "CompleteRequestParams",
            CompleteRequestParams,
            ["CompleteRequestParams"]
        ),
        entry!("CompleteResult", CompleteResult, ["CompleteResult"]),
        // logging, pagination, progress, cancellation
        entry!("LoggingLevel", LoggingLevel, ["LoggingLevel"]),
        entry!(
            "SetLevelRequestParams",
            SetLevelRequestParams,
            ["SetLevelRequestParams"]
        ),
        entry!(
            "LoggingMessageNotificationParams",
            LoggingMessageNotificationParams,
            ["LoggingMessageNotificationParams"]
        ),
        entry!(
            "PaginatedRequestParams",
            PaginatedRequestParams,
            ["PaginatedRequestParams"]
        ),
        entry!(
            "ProgressNotificationParams",
            ProgressNotificationParams,
            ["ProgressNotificationParams"]
        ),
        entry!("ProgressToken", ProgressToken, ["ProgressToken"]),
        entry!(
            "CancelledNotificationParams",
            CancelledNotificationParams,
            ["CancelledNotificationParams"]
        ),
        // sampling
        entry!(
            "SamplingMessageContentBlock",
            SamplingMessageContentBlock,
            ["SamplingMessageContentBlock"],
            content_def
        ),
        entry!("SamplingMessage", SamplingMessage, ["SamplingMessage"]),
        entry!("ModelPreferences", ModelPreferences, ["ModelPreferences"]),
        entry!("ToolChoice", ToolChoice, ["ToolChoice"]),
        entry!(
            "CreateMessageRequestParams",
            CreateMessageRequestParams,
            ["CreateMessageRequestParams"]
        ),
        entry!(
            "CreateMessageResult",
            CreateMessageResult,
            ["CreateMessageResult"]
        ),
        // elicitation
        entry!(
            "PrimitiveSchemaDefinition",
            PrimitiveSchemaDefinition,
            ["PrimitiveSchemaDefinition"],
            primitive_def
        ),
        entry!(
            "ElicitationSchema",
            ElicitationSchema,
            ["/$defs/ElicitRequestFormParams/properties/requestedSchema"]
        ),
        entry!(
            "ElicitRequestParams",
            ElicitRequestParams,
            ["ElicitRequestParams"],
            elicit_def
        ),
        entry!("ElicitResult", ElicitResult, ["ElicitResult"]),
        entry!(
            "ElicitationCompleteNotificationParams",
            ElicitationCompleteNotificationParams,
            ["/$defs/ElicitationCompleteNotification/properties/params"]
        ),
        entry!(
            "UrlElicitationRequiredErrorData",
            UrlElicitationRequiredErrorData,
            ["/$defs/URLElicitationRequiredError/properties/error/allOf/1/properties/data"]
        ),
        // roots
        entry!("Root", Root, ["Root"]),
        entry!("ListRootsResult", ListRootsResult, ["ListRootsResult"]),
        // tasks
        entry!("Task", Task, ["Task"]),
        entry!("TaskMetadata", TaskMetadata, ["TaskMetadata"]),
        entry!("CreateTaskResult", CreateTaskResult, ["CreateTaskResult"]),
        entry!("ListTasksResult", ListTasksResult, ["ListTasksResult"]),
    ]
}

// ---------------------------------------------------------------------------------------------
// Golden round-trip + 2025-11-25 schema
// ---------------------------------------------------------------------------------------------

#[test]
fn fixtures_round_trip_and_match_the_2025_11_25_schema() {
    let mut schema = Schema::load(ProtocolVersion::V2025_11_25);
    let mut failures = Vec::new();
    let mut checked = 0;
    for entry in table() {
        for path in cases(entry.dir) {
            let name = format!(
                "{}/{}",
                entry.dir,
                path.file_name().unwrap().to_string_lossy()
            );
            let original = load(&path);
            let reserialized = match (entry.roundtrip)(&original) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            if reserialized != original {
                if update_golden() {
                    let text = serde_json::to_string_pretty(&reserialized).unwrap() + "\n";
                    std::fs::write(&path, text).unwrap();
                } else {
                    failures.push(format!(
                        "{name}: re-serialization differs\n  fixture: {original}\n  rust:    {reserialized}"
                    ));
                }
            }
            let extra = (entry.per_case)(&reserialized);
            for def in entry.defs.iter().copied().chain(extra) {
                let pointer = schema.def(def);
                if let Err(e) = schema.check(&pointer, &reserialized) {
                    failures.push(format!("{name}:\n{e}"));
                }
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(checked >= 90, "only {checked} fixtures checked");
}

#[test]
fn every_fixture_belongs_to_a_type_and_every_type_has_fixtures() {
    let known: BTreeSet<&str> = table().iter().map(|e| e.dir).collect();
    let mut problems = Vec::new();
    for dir in std::fs::read_dir(FIXTURES).unwrap() {
        let path = dir.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == SCHEMA_DIR {
            continue;
        }
        if !path.is_dir() {
            problems.push(format!("stray file {name}"));
        } else if !known.contains(name.as_str()) {
            problems.push(format!("orphan fixture directory {name}"));
        } else {
            for file in std::fs::read_dir(&path).unwrap() {
                let file = file.unwrap().path();
                if file.extension().is_none_or(|x| x != "json") {
                    problems.push(format!("non-JSON fixture {}", file.display()));
                }
            }
        }
    }
    for dir in known {
        if cases(dir).is_empty() {
            problems.push(format!("no fixtures for {dir}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn union_fixtures_cover_every_variant() {
    let names = |dir: &str| -> BTreeSet<String> {
        cases(dir)
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let covered =
        |dir: &str, per_case: fn(&Value) -> Option<&'static str>| -> BTreeSet<&'static str> {
            cases(dir)
                .iter()
                .filter_map(|p| per_case(&load(p)))
                .collect()
        };
    assert_eq!(
        covered("ContentBlock", content_def),
        BTreeSet::from([
            "TextContent",
            "ImageContent",
            "AudioContent",
            "ResourceLink",
            "EmbeddedResource"
        ])
    );
    assert_eq!(
        covered("SamplingMessageContentBlock", content_def),
        BTreeSet::from([
            "TextContent",
            "ImageContent",
            "AudioContent",
            "ToolUseContent",
            "ToolResultContent"
        ])
    );
    assert_eq!(
        covered("ResourceContents", contents_def),
        BTreeSet::from(["TextResourceContents", "BlobResourceContents"])
    );
    assert_eq!(
        covered("ElicitRequestParams", elicit_def),
        BTreeSet::from(["ElicitRequestFormParams", "ElicitRequestURLParams"])
    );
    assert_eq!(covered("PrimitiveSchemaDefinition", primitive_def).len(), 8);
    assert!(names("ContentBlock").contains("resource_blob"));
}

/// The strict schema really rejects what the published one lets through.
#[test]
fn strict_schema_rejects_unknown_and_misspelt_fields() {
    let mut schema = Schema::load(ProtocolVersion::V2025_11_25);
    let tool = schema.def("Tool");
    let ok = json!({"name": "t", "inputSchema": {"type": "object", "additionalProperties": false}});
    assert!(schema.check(&tool, &ok).is_ok());
    let misspelt = json!({"name": "t", "inputSchema": {"type": "object"}, "output_schema": {}});
    let err = schema.check(&tool, &misspelt).unwrap_err();
    assert!(
        err.contains("strict") && !err.contains("published"),
        "{err}"
    );
    let wrong_type = json!({"type": "text"});
    assert!(
        schema
            .check(&schema.def("ContentBlock"), &wrong_type)
            .is_err()
    );
}

// ---------------------------------------------------------------------------------------------
// Method names
// ---------------------------------------------------------------------------------------------

#[test]
fn method_constants_cover_every_method_in_the_schema() {
    let mut in_schema = BTreeSet::new();
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let schema = Schema::load(version);
        for def in schema.published["$defs"].as_object().unwrap().values() {
            if let Some(method) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                in_schema.insert(method.to_owned());
            }
        }
    }
    assert!(in_schema.len() > 30, "found only {in_schema:?}");
    // The Tasks extension's own methods live in its own specification, not the core schema.
    in_schema.insert(protocol::method::TASKS_UPDATE.to_owned());
    in_schema.insert(protocol::method::NOTIFICATION_TASKS.to_owned());
    let ours: BTreeSet<String> = protocol::method::REQUESTS
        .iter()
        .chain(protocol::method::NOTIFICATIONS)
        .map(|m| (*m).to_owned())
        .collect();
    let missing: Vec<_> = in_schema.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&in_schema).collect();
    assert!(
        missing.is_empty(),
        "methods without a constant: {missing:?}"
    );
    assert!(extra.is_empty(), "constants not in the schema: {extra:?}");
    for method in &in_schema {
        assert!(protocol::method::is_protocol_method(method), "{method}");
    }
}
