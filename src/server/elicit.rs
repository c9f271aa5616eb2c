//! Typed elicitation: [`RequestContext::elicit_as`] asks for the form a type's JSON schema
//! describes and reads the answer as that type ([`Elicited`]).

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::McpError;
use crate::protocol::{ElicitAction, ElicitationSchema};
use crate::server::RequestContext;

/// What the user answered to a typed form ([`RequestContext::elicit_as`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form: its values.
    Accepted(T),
    /// The user refused.
    Declined,
    /// The user dismissed the form without choosing.
    Cancelled,
}

/// `T`'s JSON schema as an elicitation form. An `Option` field is a field the user may leave
/// empty (not required), not one typed `null`, which forms cannot express.
fn form_schema<T: schemars::JsonSchema>() -> Result<ElicitationSchema, McpError> {
    let mut schema = crate::server::handler::schema_of::<T>();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.values_mut().for_each(drop_null);
    }
    // Keys a form has no place for; the rest must be a form's.
    for key in ["$schema", "title", "description", "additionalProperties"] {
        schema.remove(key);
    }
    serde_json::from_value(Value::Object(schema)).map_err(|err| {
        McpError::internal(format!(
            "{} cannot be an elicitation form: {err}",
            std::any::type_name::<T>()
        ))
    })
}

/// An optional field's schema without its `null` alternative (`"type": ["string", "null"]`,
/// or `anyOf` with `{"type": "null"}`).
fn drop_null(field: &mut Value) {
    let Value::Object(object) = field else {
        return;
    };
    if let Some(Value::Array(types)) = object.get("type") {
        let others: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [only] = others.as_slice() {
            object.insert("type".into(), only.clone());
        }
        return;
    }
    let rest = match object.get("anyOf") {
        Some(Value::Array(alternatives)) => {
            let others: Vec<&Value> = alternatives
                .iter()
                .filter(|alt| alt.get("type").and_then(Value::as_str) != Some("null"))
                .collect();
            match others.as_slice() {
                [only] if others.len() < alternatives.len() => (*only).clone(),
                _ => return,
            }
        }
        _ => return,
    };
    object.remove("anyOf");
    if let Value::Object(rest) = rest {
        for (key, value) in rest {
            object.entry(key).or_insert(value);
        }
    }
}

impl RequestContext {
    /// Asks the user to fill the form that `T` describes, and reads the answer as `T`: the
    /// form's schema is `T`'s JSON schema (derive `JsonSchema`; a flat struct of strings,
    /// numbers, integers, booleans and string enums, as elicitation forms allow; doc comments
    /// become the fields' descriptions).
    ///
    /// ```
    /// use actix_mcp::{Elicited, McpError, RequestContext};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// /// Where to ship the order.
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Address {
    ///     /// The street and number.
    ///     street: String,
    ///     /// The city.
    ///     city: String,
    /// }
    ///
    /// async fn ship(cx: RequestContext) -> Result<String, McpError> {
    ///     Ok(match cx.elicit_as::<Address>("Where should we ship it?").await? {
    ///         Elicited::Accepted(address) => format!("shipping to {}, {}", address.street, address.city),
    ///         Elicited::Declined | Elicited::Cancelled => "not shipped".to_owned(),
    ///     })
    /// }
    /// ```
    ///
    /// # Errors
    /// An internal error when `T`'s schema is not a form (nested objects, arrays of objects,
    /// optional fields typed `null`); a tool error (the model sees it) when the values the
    /// client sent are not a `T`; otherwise as [`elicit`](Self::elicit).
    pub async fn elicit_as<T>(&self, message: impl Into<String>) -> Result<Elicited<T>, McpError>
    where
        T: DeserializeOwned + schemars::JsonSchema,
    {
        let schema = form_schema::<T>()?;
        let answer = self.elicit_form(message, schema).await?;
        match answer.action {
            ElicitAction::Accept => {
                let values = Value::Object(answer.content.unwrap_or_default());
                serde_json::from_value(values)
                    .map(Elicited::Accepted)
                    .map_err(|err| {
                        McpError::tool(format!(
                            "the form's values are not a {}: {err}",
                            std::any::type_name::<T>()
                        ))
                    })
            }
            ElicitAction::Decline => Ok(Elicited::Declined),
            ElicitAction::Cancel => Ok(Elicited::Cancelled),
        }
    }
}
