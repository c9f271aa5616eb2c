//! The golden fixtures of the protocol model and the schemas they are checked against.
//!
//! Every file `tests/fixtures/protocol/<TypeName>/<case>.json` holds one value of a Rust type of
//! `actix_mcp::protocol`; `tests/fixtures/protocol/_schema/<version>/schema.json` is each
//! revision's schema, copied verbatim from the spec repository. [`Schema::check`] validates
//! twice: against the schema as published, and against a strict copy that also rejects
//! properties the schema does not name, so a misspelt field fails.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use actix_mcp::protocol::ProtocolVersion;
use serde_json::{Value, json};

/// Where the fixtures live.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/protocol");
/// The directory of the schemas, beside the fixture directories.
pub const SCHEMA_DIR: &str = "_schema";

/// One revision's schema document, published and strict, with a validator cache.
pub struct Schema {
    /// The revision.
    pub version: ProtocolVersion,
    /// The schema as published.
    pub published: Value,
    /// The same with `additionalProperties: false` wherever it was silent.
    pub strict: Value,
    cache: HashMap<(String, bool), jsonschema::Validator>,
}

impl Schema {
    /// Loads one revision's schema from the fixtures.
    pub fn load(version: ProtocolVersion) -> Self {
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
    pub fn defs_key(&self) -> &'static str {
        if self.published.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        }
    }

    /// JSON pointer of a named type, e.g. `/$defs/Tool`.
    pub fn def(&self, name: &str) -> String {
        if name.starts_with('/') {
            name.to_owned()
        } else {
            format!("/{}/{name}", self.defs_key())
        }
    }

    /// The validator of the type at `pointer`, compiled once.
    pub fn validator(&mut self, pointer: &str, strict: bool) -> &jsonschema::Validator {
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
    pub fn check(&mut self, pointer: &str, instance: &Value) -> Result<(), String> {
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
pub fn strictify(node: &mut Value, params: bool) {
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

/// Every fixture file under a type directory, sorted.
pub fn cases(dir: &str) -> Vec<PathBuf> {
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

/// A fixture file as JSON.
pub fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fixture `<dir>/<case>.json`.
pub fn fixture(dir: &str, case: &str) -> Value {
    load(&Path::new(FIXTURES).join(dir).join(format!("{case}.json")))
}

/// `UPDATE_GOLDEN=1`: rewrite the fixtures from the Rust re-serialization.
pub fn update_golden() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v != "0" && !v.is_empty())
}
