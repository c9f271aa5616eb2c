//! The restricted JSON Schema of an elicitation form: [`ElicitationSchema`], a flat object
//! whose fields are [`PrimitiveSchemaDefinition`]s (text, number, boolean, and single- or
//! multi-select enums).
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::protocol::meta::JsonObject;

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

    /// The default value of every field that declares one, by name: what a client fills in
    /// for fields the user left out (SEP-1034).
    pub fn defaults(&self) -> JsonObject {
        let mut defaults = JsonObject::new();
        for (name, schema) in &self.properties {
            let value = match schema {
                PrimitiveSchemaDefinition::String(s) => s.default.clone().map(Value::from),
                PrimitiveSchemaDefinition::Number(n) => n.default.map(|d| {
                    let whole = n.r#type == NumberType::Integer && d.fract() == 0.0;
                    if whole && d.abs() < 9.0e15 {
                        #[allow(clippy::cast_possible_truncation)]
                        Value::from(d as i64)
                    } else {
                        Value::from(d)
                    }
                }),
                PrimitiveSchemaDefinition::Boolean(b) => b.default.map(Value::from),
                PrimitiveSchemaDefinition::UntitledSingleSelect(e) => {
                    e.default.clone().map(Value::from)
                }
                PrimitiveSchemaDefinition::TitledSingleSelect(e) => {
                    e.default.clone().map(Value::from)
                }
                PrimitiveSchemaDefinition::UntitledMultiSelect(e) => {
                    e.default.clone().map(Value::from)
                }
                PrimitiveSchemaDefinition::TitledMultiSelect(e) => {
                    e.default.clone().map(Value::from)
                }
                PrimitiveSchemaDefinition::LegacyTitledEnum(e) => {
                    e.default.clone().map(Value::from)
                }
            };
            if let Some(value) = value {
                defaults.insert(name.clone(), value);
            }
        }
        defaults
    }

    /// The schema of the field called `name`.
    pub fn get(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

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
