//! Elicitation: the server asks the user for input through the client (`elicitation/create`).
//!
//! Form mode collects a flat object described by [`ElicitationSchema`]; URL mode (2025-11-25)
//! sends the user to a web page. On the wire `mode` is `"form"` (may be absent) or `"url"`.
//!
//! One type serves both eras: a URL-mode elicitation carries an `elicitationId` in 2025-11-25,
//! which requires it, and none in 2026-07-28, which removed it (with
//! `notifications/elicitation/complete` and `-32042`); [`ForVersion`](super::ForVersion)
//! removes it (and `task`) for a 2026 input request.
//!
//! Spec: <https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation>,
//! <https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{JsonObject, Meta};
use super::tasks::TaskMetadata;

mod schema;

pub use schema::{
    BooleanSchema, ElicitationSchema, EnumOption, LegacyTitledEnumSchema, NumberSchema, NumberType,
    ObjectType, PrimitiveSchemaDefinition, StringFormat, StringSchema, StringType, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};

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

/// Params of a URL-mode `elicitation/create` (2025-11-25+); written with `mode: "url"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "UrlRepr", from = "UrlRepr")]
pub struct ElicitRequestURLParams {
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open.
    pub url: String,
    /// Server-chosen id, echoed by `notifications/elicitation/complete`: required in
    /// 2025-11-25 (a client of that revision refuses a URL elicitation without one), absent in
    /// 2026-07-28.
    pub elicitation_id: Option<String>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elicitation_id: Option<String>,
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

    /// URL-mode params with the id 2025-11-25 requires (removed for a 2026 input request).
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        Self::Url(ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: Some(elicitation_id.into()),
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

    /// The user submitted the form with `values`: a struct (or map) that serialises to a JSON
    /// object, the form's fields by name.
    ///
    /// ```
    /// use actix_mcp::protocol::{ElicitAction, ElicitResult};
    ///
    /// #[derive(serde::Serialize)]
    /// struct Address { street: String, city: String }
    ///
    /// let answer = ElicitResult::accept(Address { street: "1 Main St".into(), city: "Lyon".into() })
    ///     .expect("an object");
    /// assert_eq!(answer.action, ElicitAction::Accept);
    /// assert_eq!(answer.content.unwrap()["city"], "Lyon");
    /// ```
    ///
    /// # Errors
    /// When `values` does not serialise to a JSON object.
    pub fn accept(values: impl Serialize) -> Result<Self, serde_json::Error> {
        match serde_json::to_value(values)? {
            Value::Object(content) => Ok(Self {
                action: ElicitAction::Accept,
                content: Some(content),
                meta: None,
            }),
            other => Err(serde::ser::Error::custom(format!(
                "a form's values are a JSON object, not {other}"
            ))),
        }
    }

    /// The user refused.
    pub fn decline() -> Self {
        Self::new(ElicitAction::Decline)
    }

    /// The user dismissed the form without choosing.
    pub fn cancel() -> Self {
        Self::new(ElicitAction::Cancel)
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
        assert!(
            matches!(&p, ElicitRequestParams::Url(u) if u.elicitation_id.as_deref() == Some("e1"))
        );
        let bad =
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "voice", "message": "x"}));
        assert!(bad.is_err());
        let missing_url =
            serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "x"}));
        assert!(missing_url.is_err());
    }

    #[test]
    fn a_2026_url_elicitation_has_no_id() {
        let wire = json!({"mode": "url", "message": "Log in", "url": "https://example.com/x"});
        let p: ElicitRequestParams = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(&p, ElicitRequestParams::Url(u) if u.elicitation_id.is_none()));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }
}
