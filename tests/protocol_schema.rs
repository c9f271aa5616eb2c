//! Golden-JSON and schema tests for `actix_mcp::protocol`.
//!
//! Every file `tests/fixtures/protocol/<TypeName>/<case>.json` is deserialized into its Rust
//! type, serialized again, compared with the file, and validated against the spec's JSON schema
//! (`tests/fixtures/protocol/_schema/<version>/schema.json`, copied verbatim from the spec
//! repository). Validation runs twice: against the schema as published, and against a strict
//! copy that also rejects properties the schema does not name, so a misspelt field fails.
//!
//! `UPDATE_GOLDEN=1 cargo test --test protocol_schema` rewrites the fixtures from the Rust
//! re-serialization (review the diff before committing).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use actix_mcp::protocol::{self, *};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/protocol");
const SCHEMA_DIR: &str = "_schema";

// ---------------------------------------------------------------------------------------------
// Schema loading and validation
// ---------------------------------------------------------------------------------------------

/// One revision's schema document, published and strict, with a validator cache.
struct Schema {
    version: ProtocolVersion,
    published: Value,
    strict: Value,
    cache: HashMap<(String, bool), jsonschema::Validator>,
}

impl Schema {
    fn load(version: ProtocolVersion) -> Self {
        let path = Path::new(FIXTURES)
            .join(SCHEMA_DIR)
            .join(version.as_str())
            .join("schema.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let published: Value = serde_json::from_str(&text).unwrap();
        let mut strict = published.clone();
        strictify(&mut strict, false);
        Self {
            version,
            published,
            strict,
            cache: HashMap::new(),
        }
    }

    /// `$defs` (2020-12) or `definitions` (draft-07).
    fn defs_key(&self) -> &'static str {
        if self.published.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        }
    }

    /// JSON pointer of a named type, e.g. `/$defs/Tool`.
    fn def(&self, name: &str) -> String {
        if name.starts_with('/') {
            name.to_owned()
        } else {
            format!("/{}/{name}", self.defs_key())
        }
    }

    fn validator(&mut self, pointer: &str, strict: bool) -> &jsonschema::Validator {
        let key = (pointer.to_owned(), strict);
        if !self.cache.contains_key(&key) {
            let doc = if strict {
                &self.strict
            } else {
                &self.published
            };
            let defs_key = self.defs_key();
            assert!(
                doc.pointer(pointer).is_some(),
                "{pointer} does not exist in the {} schema",
                self.version
            );
            let mut root = json!({
                "$schema": doc["$schema"].clone(),
                "allOf": [{"$ref": format!("#{pointer}")}],
            });
            root[defs_key] = doc[defs_key].clone();
            let validator = jsonschema::options()
                .build(&root)
                .unwrap_or_else(|e| panic!("building validator for {pointer}: {e}"));
            self.cache.insert(key.clone(), validator);
        }
        &self.cache[&key]
    }

    /// Validates against the published and the strict schema; returns every error.
    fn check(&mut self, pointer: &str, instance: &Value) -> Result<(), String> {
        let mut errors = Vec::new();
        let version = self.version;
        for strict in [false, true] {
            let label = if strict { "strict" } else { "published" };
            for err in self.validator(pointer, strict).iter_errors(instance) {
                errors.push(format!(
                    "{} {label} #{pointer}: {err} at {}",
                    version,
                    err.instance_path()
                ));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }
}

/// Adds `additionalProperties: false` to every object schema that lists `properties` and says
/// nothing about other keys. Tool `inputSchema`/`outputSchema` are real JSON Schemas and stay
/// open. A request's `params` may always carry `_meta` (the base `Request` type allows it).
fn strictify(node: &mut Value, params: bool) {
    match node {
        Value::Object(map) => {
            if map.get("properties").is_some_and(Value::is_object)
                && !map.contains_key("additionalProperties")
            {
                if params {
                    let props = map["properties"].as_object_mut().unwrap();
                    props
                        .entry("_meta")
                        .or_insert_with(|| json!({"type": "object"}));
                }
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, child) in map.iter_mut() {
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (name, schema) in props.iter_mut() {
                            if name != "inputSchema" && name != "outputSchema" {
                                strictify(schema, name == "params");
                            }
                        }
                    }
                } else {
                    strictify(child, false);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| strictify(item, false)),
        _ => {}
    }
}

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

/// Every fixture file under a type directory, sorted.
fn cases(dir: &str) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(Path::new(FIXTURES).join(dir)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture(dir: &str, case: &str) -> Value {
    load(&Path::new(FIXTURES).join(dir).join(format!("{case}.json")))
}

fn update_golden() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v != "0" && !v.is_empty())
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
    let schema = Schema::load(ProtocolVersion::V2025_11_25);
    let mut in_schema = BTreeSet::new();
    for def in schema.published["$defs"].as_object().unwrap().values() {
        if let Some(method) = def
            .pointer("/properties/method/const")
            .and_then(Value::as_str)
        {
            in_schema.insert(method.to_owned());
        }
    }
    assert!(in_schema.len() > 25, "found only {in_schema:?}");
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

// ---------------------------------------------------------------------------------------------
// Version adapters
// ---------------------------------------------------------------------------------------------

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
fn adapting_to_latest_changes_nothing() {
    for (dir, case, adapt) in adapted_cases() {
        let original = fixture(dir, case);
        assert_eq!(
            adapt(&original, ProtocolVersion::LATEST),
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

    let mut result = CallToolResult::structured(json!({"t": 1}));
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
