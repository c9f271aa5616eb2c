//! Elicitation: the server asks the user for input through the client (`elicitation/create`).
//!
//! Form mode collects a flat object described by [`ElicitationSchema`]; URL mode (2025-11-25)
//! sends the user to a web page. On the wire `mode` is `"form"` (may be absent) or `"url"`.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{JsonObject, Meta};
use super::tasks::TaskMetadata;

/// Marker for the JSON value `"object"` in a `type` field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObjectType {
    /// `"object"`.
    #[default]
    #[serde(rename = "object")]
    Object,
}

/// Marker for the JSON value `"string"` in a `type` field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StringType {
    /// `"string"`.
    #[default]
    #[serde(rename = "string")]
    String,
}

/// `type` of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any JSON number.
    #[default]
    Number,
    /// Whole numbers only.
    Integer,
}

/// `format` of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// An e-mail address.
    Email,
    /// A URI.
    Uri,
    /// A calendar date.
    Date,
    /// A date and time.
    DateTime,
}

/// A free-text field (`type: "string"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// A numeric field (`type: "number"` or `"integer"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `number` or `integer`.
    pub r#type: NumberType,
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
}

/// A checkbox (`type: "boolean"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// One choice of a titled enum: the value and its label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnumOption {
    /// The value sent back.
    pub r#const: String,
    /// The label shown.
    pub title: String,
}

/// Single choice among plain strings (`type: "string"`, `enum`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    pub r#enum: Vec<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Single choice among labelled values (`type: "string"`, `oneOf: [{const, title}]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values with labels.
    pub one_of: Vec<EnumOption>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// `items` of an untitled multi-select: `{type: "string", enum}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    pub r#type: StringType,
    /// Allowed values.
    pub r#enum: Vec<String>,
}

/// `items` of a titled multi-select: `{anyOf: [{const, title}]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// Allowed values with labels.
    pub any_of: Vec<EnumOption>,
}

/// Multiple choice among plain strings (`type: "array"`, `items.enum`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The allowed values.
    pub items: UntitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Multiple choice among labelled values (`type: "array"`, `items.anyOf`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The allowed values with labels.
    pub items: TitledEnumItems,
    /// Pre-selected values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Deprecated single choice with parallel `enumNames` labels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Field label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Field help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    pub r#enum: Vec<String>,
    /// Labels, one per value (without them the schema reads as untitled single-select).
    pub enum_names: Vec<String>,
    /// Pre-selected value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The schema of one form field; the variant is chosen by `type` and the keys present.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchemaDefinition {
    /// Free text.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// Single choice, plain values.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// Single choice, labelled values.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Multiple choice, plain values.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Multiple choice, labelled values.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// Deprecated single choice with `enumNames`.
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

fn tagged<T: Serialize, E: serde::ser::Error>(inner: &T, tag: Option<&str>) -> Result<Value, E> {
    let mut value = serde_json::to_value(inner).map_err(E::custom)?;
    if let (Some(tag), Value::Object(map)) = (tag, &mut value) {
        map.insert("type".into(), Value::from(tag));
    }
    Ok(value)
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = match self {
            Self::String(s) => tagged(s, Some("string")),
            Self::Number(s) => tagged(s, None),
            Self::Boolean(s) => tagged(s, Some("boolean")),
            Self::UntitledSingleSelect(s) => tagged(s, Some("string")),
            Self::TitledSingleSelect(s) => tagged(s, Some("string")),
            Self::UntitledMultiSelect(s) => tagged(s, Some("array")),
            Self::TitledMultiSelect(s) => tagged(s, Some("array")),
            Self::LegacyTitledEnum(s) => tagged(s, Some("string")),
        }?;
        value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = JsonObject::deserialize(deserializer)?;
        let ty = map
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let has = |k: &str| map.contains_key(k);
        let items_have_any_of = map
            .get("items")
            .and_then(Value::as_object)
            .is_some_and(|items| items.contains_key("anyOf"));
        let titled_single = has("oneOf");
        let legacy = has("enum") && has("enumNames");
        let untitled_single = has("enum");
        let value = Value::Object(map);
        let parsed = match ty.as_str() {
            "string" if titled_single => {
                serde_json::from_value(value).map(Self::TitledSingleSelect)
            }
            "string" if legacy => serde_json::from_value(value).map(Self::LegacyTitledEnum),
            "string" if untitled_single => {
                serde_json::from_value(value).map(Self::UntitledSingleSelect)
            }
            "string" => serde_json::from_value(value).map(Self::String),
            "number" | "integer" => serde_json::from_value(value).map(Self::Number),
            "boolean" => serde_json::from_value(value).map(Self::Boolean),
            "array" if items_have_any_of => {
                serde_json::from_value(value).map(Self::TitledMultiSelect)
            }
            "array" => serde_json::from_value(value).map(Self::UntitledMultiSelect),
            other => {
                return Err(D::Error::custom(format!(
                    "unsupported primitive schema type `{other}`"
                )));
            }
        };
        parsed.map_err(D::Error::custom)
    }
}

impl From<StringSchema> for PrimitiveSchemaDefinition {
    fn from(s: StringSchema) -> Self {
        Self::String(s)
    }
}

impl From<NumberSchema> for PrimitiveSchemaDefinition {
    fn from(s: NumberSchema) -> Self {
        Self::Number(s)
    }
}

impl From<BooleanSchema> for PrimitiveSchemaDefinition {
    fn from(s: BooleanSchema) -> Self {
        Self::Boolean(s)
    }
}

mod ordered_properties {
    use super::PrimitiveSchemaDefinition;
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::fmt;

    type Props = Vec<(String, PrimitiveSchemaDefinition)>;

    pub(super) fn serialize<S: Serializer>(
        props: &Props,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(props.len()))?;
        for (name, schema) in props {
            map.serialize_entry(name, schema)?;
        }
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Props, D::Error> {
        struct PropsVisitor;
        impl<'de> Visitor<'de> for PropsVisitor {
            type Value = Props;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of property schemas")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Props, A::Error> {
                let mut props = Vec::new();
                while let Some(entry) = access.next_entry()? {
                    props.push(entry);
                }
                Ok(props)
            }
        }
        deserializer.deserialize_map(PropsVisitor)
    }
}

/// The restricted JSON Schema of a form: a flat object of primitive fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationSchema {
    /// Optional `$schema` dialect URI.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    pub r#type: ObjectType,
    /// Field schemas by name, in display order.
    #[serde(with = "ordered_properties")]
    pub properties: Vec<(String, PrimitiveSchemaDefinition)>,
    /// Names of required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitationSchema {
    /// An empty form schema.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field; `required` also lists it in `required`.
    #[must_use]
    pub fn property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
        required: bool,
    ) -> Self {
        let name = name.into();
        if required {
            self.required
                .get_or_insert_with(Vec::new)
                .push(name.clone());
        }
        self.properties.push((name, schema.into()));
        self
    }

    /// The schema of the field called `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum FormTag {
    #[serde(rename = "form")]
    Form,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum UrlTag {
    #[serde(rename = "url")]
    Url,
}

/// Params of a form-mode `elicitation/create`; written with `mode: "form"`, read with or without it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "FormRepr", from = "FormRepr")]
pub struct ElicitRequestFormParams {
    /// Why the input is needed.
    pub message: String,
    /// The form's fields.
    pub requested_schema: ElicitationSchema,
    /// Asks for the request to run as a task (2025-11-25).
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    pub meta: Option<Meta>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FormRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<FormTag>,
    message: String,
    requested_schema: ElicitationSchema,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<TaskMetadata>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
}

impl From<ElicitRequestFormParams> for FormRepr {
    fn from(p: ElicitRequestFormParams) -> Self {
        let ElicitRequestFormParams {
            message,
            requested_schema,
            task,
            meta,
        } = p;
        Self {
            mode: Some(FormTag::Form),
            message,
            requested_schema,
            task,
            meta,
        }
    }
}

impl From<FormRepr> for ElicitRequestFormParams {
    fn from(r: FormRepr) -> Self {
        Self {
            message: r.message,
            requested_schema: r.requested_schema,
            task: r.task,
            meta: r.meta,
        }
    }
}

/// Params of a URL-mode `elicitation/create` (2025-11-25); written with `mode: "url"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "UrlRepr", from = "UrlRepr")]
pub struct ElicitRequestURLParams {
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Server-chosen id, echoed by `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// Asks for the request to run as a task (2025-11-25).
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    pub meta: Option<Meta>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UrlRepr {
    mode: UrlTag,
    message: String,
    url: String,
    elicitation_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<TaskMetadata>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
}

impl From<ElicitRequestURLParams> for UrlRepr {
    fn from(p: ElicitRequestURLParams) -> Self {
        let ElicitRequestURLParams {
            message,
            url,
            elicitation_id,
            task,
            meta,
        } = p;
        Self {
            mode: UrlTag::Url,
            message,
            url,
            elicitation_id,
            task,
            meta,
        }
    }
}

impl From<UrlRepr> for ElicitRequestURLParams {
    fn from(r: UrlRepr) -> Self {
        Self {
            message: r.message,
            url: r.url,
            elicitation_id: r.elicitation_id,
            task: r.task,
            meta: r.meta,
        }
    }
}

/// Params of `elicitation/create`: form mode or URL mode, chosen by `mode` (absent = form).
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitRequestParams {
    /// `mode: "form"` (or no `mode`).
    Form(ElicitRequestFormParams),
    /// `mode: "url"`.
    Url(ElicitRequestURLParams),
}

impl ElicitRequestParams {
    /// Form-mode params.
    pub fn form(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        Self::Form(ElicitRequestFormParams {
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
        })
    }

    /// URL-mode params.
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Self::Url(ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: elicitation_id.into(),
            task: None,
            meta: None,
        })
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            Self::Form(p) => &p.message,
            Self::Url(p) => &p.message,
        }
    }

    /// Request metadata.
    pub fn meta(&self) -> Option<&Meta> {
        match self {
            Self::Form(p) => p.meta.as_ref(),
            Self::Url(p) => p.meta.as_ref(),
        }
    }
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(p) => p.serialize(serializer),
            Self::Url(p) => p.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = JsonObject::deserialize(deserializer)?;
        let mode = match map.get("mode") {
            None => "form".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "invalid elicitation mode {other}"
                )));
            }
        };
        let value = Value::Object(map);
        match mode.as_str() {
            "form" => serde_json::from_value(value)
                .map(Self::Form)
                .map_err(D::Error::custom),
            "url" => serde_json::from_value(value)
                .map(Self::Url)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "unknown elicitation mode `{other}`"
            ))),
        }
    }
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// The user submitted (form) or consented to open the URL (URL mode).
    Accept,
    /// The user explicitly refused.
    Decline,
    /// The user dismissed without choosing.
    Cancel,
}

/// Result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// Submitted values (form mode, `accept` only): strings, integers, booleans or string arrays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitResult {
    /// A result with only an action.
    pub fn new(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
            meta: None,
        }
    }
}

/// Params of `notifications/elicitation/complete` (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteNotificationParams {
    /// Id of the finished URL elicitation.
    pub elicitation_id: String,
}

/// `error.data` of a `-32042` URL-elicitation-required error (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlElicitationRequiredErrorData {
    /// The URL elicitations that must finish first.
    pub elicitations: Vec<ElicitRequestURLParams>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_mode_means_form() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap();
        let ElicitRequestParams::Form(form) = &p else {
            panic!("expected form, got {p:?}")
        };
        assert_eq!(form.message, "Name?");
        assert!(matches!(
            form.requested_schema.get("name"),
            Some(PrimitiveSchemaDefinition::String(_))
        ));
        assert_eq!(serde_json::to_value(&p).unwrap()["mode"], json!("form"));
    }

    #[test]
    fn url_mode_and_unknown_mode() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "url", "message": "Log in", "url": "https://example.com/x", "elicitationId": "e1"
        }))
        .unwrap();
        assert!(matches!(&p, ElicitRequestParams::Url(u) if u.elicitation_id == "e1"));
        let bad =
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "voice", "message": "x"}));
        assert!(bad.is_err());
        let missing_url =
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "x"}));
        assert!(missing_url.is_err());
    }

    #[test]
    fn primitive_schemas_are_told_apart() {
        let cases = [
            (json!({"type": "string"}), "String"),
            (json!({"type": "integer"}), "Number"),
            (json!({"type": "boolean"}), "Boolean"),
            (
                json!({"type": "string", "enum": ["a"]}),
                "UntitledSingleSelect",
            ),
            (
                json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
                "LegacyTitledEnum",
            ),
            (
                json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
                "TitledSingleSelect",
            ),
            (
                json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
                "UntitledMultiSelect",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
                "TitledMultiSelect",
            ),
        ];
        for (json, kind) in cases {
            let s: PrimitiveSchemaDefinition = serde_json::from_value(json.clone()).unwrap();
            assert!(format!("{s:?}").starts_with(kind), "{json} parsed as {s:?}");
            assert_eq!(serde_json::to_value(&s).unwrap(), json);
        }
        assert!(
            serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err()
        );
    }

    #[test]
    fn schema_builder_keeps_order() {
        let schema = ElicitationSchema::new()
            .property("z", StringSchema::default(), true)
            .property("a", BooleanSchema::default(), false);
        let v = serde_json::to_value(&schema).unwrap();
        let keys: Vec<_> = v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["z", "a"]);
        assert_eq!(v["required"], json!(["z"]));
    }
}
