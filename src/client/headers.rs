//! The request-metadata headers of Streamable HTTP in 2026-07-28: `Mcp-Method`, `Mcp-Name`
//! and the `Mcp-Param-{Name}` headers that mirror tool arguments annotated with
//! `x-mcp-header` in the tool's input schema, with the annotation rules and the value encoding.
//!
//! Pure functions: the session actor calls [`request_headers`] for every message it sends in
//! the 2026 era (transports that do not mirror headers, such as stdio, ignore them), learns
//! each tool's annotations with [`param_headers`] from the `tools/list` results it sees, and
//! the typed API drops the tools whose annotations break the rules from its `tools/list` view.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2026-07-28/basic/transports#custom-headers-from-tool-parameters>

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::protocol::method;

/// Header naming the JSON-RPC method of every 2026 HTTP message.
pub(crate) const MCP_METHOD: &str = "Mcp-Method";
/// Header naming the tool or prompt (`params.name`), the resource (`params.uri`) or the task
/// (`params.taskId`) a request is about.
pub(crate) const MCP_NAME: &str = "Mcp-Name";
/// Prefix of the headers mirroring annotated tool arguments.
pub(crate) const MCP_PARAM_PREFIX: &str = "Mcp-Param-";

/// The schema keyword naming the header an argument is mirrored into.
const ANNOTATION: &str = "x-mcp-header";

/// One annotated argument: the header name (after `Mcp-Param-`) and the argument's path from
/// the root of `arguments`, through nested objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
}

/// Why a tool's `x-mcp-header` annotations are unusable (the tool is dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidAnnotation(pub(crate) String);

/// Whether `c` is an HTTP token character (RFC 9110 `tchar`).
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The annotated arguments of a tool's input schema, or why its annotations break the rules:
/// an annotation must be a non-empty string of token characters, unique (case-insensitively)
/// in the schema, on a `string`, `integer` or `boolean` property reachable from the root
/// through `properties` alone (not through `items`, combinators, conditionals or `$ref`).
pub(crate) fn param_headers(
    schema: &Map<String, Value>,
) -> Result<Vec<ParamHeader>, InvalidAnnotation> {
    let mut found = Vec::new();
    walk(schema, &At::Root, &mut found)?;
    let mut seen = HashSet::new();
    for header in &found {
        if !seen.insert(header.name.to_ascii_lowercase()) {
            return Err(InvalidAnnotation(format!(
                "the header name {:?} is used twice (names are case-insensitive)",
                header.name
            )));
        }
    }
    Ok(found)
}

/// Where a schema object sits.
enum At {
    /// The input schema itself.
    Root,
    /// A property schema reachable from the root through `properties` only, at this path.
    Property(Vec<String>),
    /// Anywhere else (below `items`, a combinator, `$defs`, ...).
    Elsewhere,
}

fn walk(
    schema: &Map<String, Value>,
    at: &At,
    found: &mut Vec<ParamHeader>,
) -> Result<(), InvalidAnnotation> {
    if let Some(annotation) = schema.get(ANNOTATION) {
        let At::Property(path) = at else {
            return Err(InvalidAnnotation(format!(
                "an {ANNOTATION} annotation is not on a property reachable through `properties`"
            )));
        };
        let Value::String(name) = annotation else {
            return Err(InvalidAnnotation(format!("{ANNOTATION} is not a string")));
        };
        if name.is_empty() {
            return Err(InvalidAnnotation(format!(
                "an {ANNOTATION} annotation is empty"
            )));
        }
        if !name.chars().all(is_tchar) {
            return Err(InvalidAnnotation(format!(
                "the header name {name:?} has characters other than HTTP token characters"
            )));
        }
        let primitive = matches!(
            schema.get("type"),
            Some(Value::String(kind)) if matches!(kind.as_str(), "string" | "integer" | "boolean")
        );
        if !primitive {
            return Err(InvalidAnnotation(format!(
                "the header {name:?} is on a property that is not a string, integer or boolean"
            )));
        }
        found.push(ParamHeader {
            name: name.clone(),
            path: path.clone(),
        });
    }
    for (key, value) in schema {
        match (key.as_str(), value) {
            // Literal values: data, never annotations.
            ("const" | "enum" | "default" | "examples", _) => {}
            ("properties", Value::Object(properties)) => {
                for (name, sub) in properties {
                    let Value::Object(sub) = sub else { continue };
                    let below = match at {
                        At::Root => At::Property(vec![name.clone()]),
                        At::Property(path) => {
                            let mut path = path.clone();
                            path.push(name.clone());
                            At::Property(path)
                        }
                        At::Elsewhere => At::Elsewhere,
                    };
                    walk(sub, &below, found)?;
                }
            }
            (_, value) => elsewhere(value, found)?,
        }
    }
    Ok(())
}

/// Any schema below a keyword other than `properties`: an annotation there is invalid.
fn elsewhere(value: &Value, found: &mut Vec<ParamHeader>) -> Result<(), InvalidAnnotation> {
    match value {
        Value::Object(object) => walk(object, &At::Elsewhere, found),
        Value::Array(items) => items.iter().try_for_each(|item| elsewhere(item, found)),
        _ => Ok(()),
    }
}

#[cfg(test)]
fn check(schema: Value) -> Result<Vec<ParamHeader>, InvalidAnnotation> {
    match schema {
        Value::Object(map) => param_headers(&map),
        _ => Ok(Vec::new()),
    }
}

/// A header value for `text`: as it is when it is plain header-safe ASCII, otherwise (non-ASCII,
/// control characters, leading or trailing whitespace, or text that looks like the encoding's
/// own markers) `=?base64?{base64 of its UTF-8}?=`.
pub(crate) fn encode_text(text: &str) -> String {
    let plain = text.chars().all(|c| (' '..='~').contains(&c))
        && text.trim_matches(|c: char| c.is_ascii_whitespace()) == text
        && !(text.starts_with("=?") && text.ends_with("?="));
    if plain {
        text.to_owned()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        format!("=?base64?{encoded}?=")
    }
}

/// The header value of an argument: strings as [`encode_text`] makes them, integers in
/// decimal, booleans `true`/`false`; `None` for `null` and for anything else (no header).
pub(crate) fn encode_value(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(encode_text(text)),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Number(number) => {
            if let Some(integer) = number.as_i64() {
                Some(integer.to_string())
            } else if let Some(integer) = number.as_u64() {
                Some(integer.to_string())
            } else {
                // An integral float (`42.0`) is still an integer argument.
                number
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0)
                    .map(|f| format!("{f:.0}"))
            }
        }
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The annotated arguments of each tool, by tool name, as learnt from `tools/list`.
pub(crate) type ToolHeaders = HashMap<String, Vec<ParamHeader>>;

/// The request-metadata headers of one message: `Mcp-Method` always, `Mcp-Name` for the
/// methods that name something, `Mcp-Param-*` for a `tools/call` of a tool in `tools`.
pub(crate) fn request_headers(
    method_name: &str,
    params: Option<&Value>,
    tools: &ToolHeaders,
) -> Vec<(String, String)> {
    let mut headers = vec![(MCP_METHOD.to_owned(), method_name.to_owned())];
    let field = |name: &str| params.and_then(|p| p.get(name)).and_then(Value::as_str);
    let named = match method_name {
        method::TOOLS_CALL | method::PROMPTS_GET => field("name"),
        method::RESOURCES_READ => field("uri"),
        m if m.starts_with("tasks/") => field("taskId"),
        _ => None,
    };
    if let Some(name) = named {
        headers.push((MCP_NAME.to_owned(), encode_text(name)));
    }
    if method_name == method::TOOLS_CALL
        && let Some(annotated) = field("name").and_then(|tool| tools.get(tool))
    {
        let arguments = params.and_then(|p| p.get("arguments"));
        for header in annotated {
            let value = header
                .path
                .iter()
                .try_fold(arguments, |at, key| Some(at?.get(key)))
                .flatten();
            if let Some(value) = value.and_then(encode_value) {
                headers.push((format!("{MCP_PARAM_PREFIX}{}", header.name), value));
            }
        }
    }
    headers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn annotations_on_top_level_and_nested_properties_are_found() {
        let headers = check(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "opts": {"type": "object", "properties": {
                    "verbose": {"type": "boolean", "x-mcp-header": "Verbose"}
                }},
                "plain": {"type": "number"}
            }
        }))
        .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            headers,
            vec![
                ParamHeader {
                    name: "Region".into(),
                    path: vec!["region".into()]
                },
                ParamHeader {
                    name: "Verbose".into(),
                    path: vec!["opts".into(), "verbose".into()]
                },
            ]
        );
    }

    #[test]
    fn broken_annotations_are_refused() {
        let prop = |p: Value| json!({"type": "object", "properties": {"v": p}});
        for schema in [
            prop(json!({"type": "string", "x-mcp-header": ""})),
            prop(json!({"type": "string", "x-mcp-header": "My Region"})),
            prop(json!({"type": "string", "x-mcp-header": "Region:Primary"})),
            prop(json!({"type": "string", "x-mcp-header": "Région"})),
            prop(json!({"type": "string", "x-mcp-header": "Region\t1"})),
            prop(json!({"type": "number", "x-mcp-header": "Score"})),
            prop(json!({"type": "object", "x-mcp-header": "Data"})),
            prop(json!({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"})),
            prop(json!({"type": "null", "x-mcp-header": "Nil"})),
            prop(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}})),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"}
            }}),
            json!({"type": "object", "anyOf": [{"properties": {
                "a": {"type": "string", "x-mcp-header": "A"}
            }}]}),
            json!({"type": "object", "$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}),
        ] {
            assert!(check(schema.clone()).is_err(), "accepted {schema}");
        }
    }

    #[test]
    fn a_property_called_like_the_keyword_is_not_an_annotation() {
        let schema = json!({"type": "object", "properties": {
            "x-mcp-header": {"type": "string"},
            "e": {"type": "string", "enum": [{"x-mcp-header": "no"}]}
        }});
        assert_eq!(check(schema), Ok(Vec::new()));
    }

    #[test]
    fn values_are_encoded_as_the_spec_says() {
        assert_eq!(encode_text("us-west1"), "us-west1");
        assert_eq!(encode_text("us west 1"), "us west 1");
        assert_eq!(encode_text(""), "");
        assert_eq!(
            encode_text("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_text(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_text("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_text("\tindented"), "=?base64?CWluZGVudGVk?=");
        assert_eq!(
            encode_text("=?base64?eA==?="),
            "=?base64?PT9iYXNlNjQ/ZUE9PT89?="
        );
        assert_eq!(encode_value(&json!(42)), Some("42".into()));
        assert_eq!(encode_value(&json!(-7)), Some("-7".into()));
        assert_eq!(encode_value(&json!(42.0)), Some("42".into()));
        assert_eq!(encode_value(&json!(true)), Some("true".into()));
        assert_eq!(encode_value(&json!(false)), Some("false".into()));
        assert_eq!(encode_value(&Value::Null), None);
    }

    #[test]
    fn a_tool_call_carries_method_name_and_param_headers() {
        let mut tools = ToolHeaders::new();
        tools.insert(
            "t".into(),
            vec![
                ParamHeader {
                    name: "Region".into(),
                    path: vec!["region".into()],
                },
                ParamHeader {
                    name: "Verbose".into(),
                    path: vec!["verbose".into()],
                },
            ],
        );
        let params = json!({"name": "t", "arguments": {"region": "eu", "verbose": null}});
        assert_eq!(
            request_headers(method::TOOLS_CALL, Some(&params), &tools),
            vec![
                ("Mcp-Method".into(), "tools/call".into()),
                ("Mcp-Name".into(), "t".into()),
                ("Mcp-Param-Region".into(), "eu".into()),
            ]
        );
        let read = json!({"uri": "file:///a%20b.txt"});
        assert_eq!(
            request_headers(method::RESOURCES_READ, Some(&read), &tools),
            vec![
                ("Mcp-Method".into(), "resources/read".into()),
                ("Mcp-Name".into(), "file:///a%20b.txt".into()),
            ]
        );
        assert_eq!(
            request_headers(method::TOOLS_LIST, None, &tools),
            vec![("Mcp-Method".into(), "tools/list".into())]
        );
    }
}
