//! Prompts: a closure with extractors ([`prompt`]) or a type implementing [`Prompt`]; the
//! argument list `prompts/list` shows is derived from the arguments type's JSON schema.
//!
//! `prompts/get` checks required arguments before the handler runs (`-32602` naming the missing
//! one). Spec: <https://modelcontextprotocol.io/specification/2025-11-25/server/prompts>

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{BuildError, McpError};
use crate::protocol::{
    GetPromptResult, Icon, JsonObject, Prompt as PromptDefinition, PromptArgument, PromptMessage,
};
use crate::server::context::RequestContext;
use crate::server::handler::{ErasedHandler, Handler, Params, erase};

/// Converts a prompt handler's output into a `prompts/get` result.
pub trait IntoGetPromptResult: Send + 'static {
    /// The conversion.
    ///
    /// # Errors
    /// When the output is itself an error.
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError>;
}

impl IntoGetPromptResult for GetPromptResult {
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(self)
    }
}

impl IntoGetPromptResult for Vec<PromptMessage> {
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoGetPromptResult for PromptMessage {
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoGetPromptResult for String {
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl<T: IntoGetPromptResult, E: Into<McpError> + Send + 'static> IntoGetPromptResult
    for Result<T, E>
{
    fn into_get_prompt_result(self) -> Result<GetPromptResult, McpError> {
        self.map_err(Into::into)
            .and_then(IntoGetPromptResult::into_get_prompt_result)
    }
}

/// A prompt as a type: typed arguments (string fields), any output.
pub trait Prompt: Send + Sync + 'static {
    /// The arguments; their schema's properties become the prompt's argument list.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the prompt returns.
    type Output: IntoGetPromptResult;

    /// The prompt's name (unique on the server).
    fn name(&self) -> String;

    /// What the prompt is for.
    fn description(&self) -> Option<String> {
        None
    }

    /// Builds the prompt's messages.
    fn get(
        &self,
        args: Self::Args,
        cx: RequestContext,
    ) -> impl Future<Output = Self::Output> + Send;
}

/// A registered prompt.
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) definition: PromptDefinition,
    pub(crate) handler: ErasedHandler<GetPromptResult>,
    /// Scopes a get needs on a bearer-protected endpoint (beyond the server's base set).
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported by `prepare`.
    scope_error: Option<BuildError>,
}

impl fmt::Debug for PromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptDef")
            .field("name", &self.definition.name)
            .finish()
    }
}

/// The prompt arguments a JSON schema describes: one per property, `required` from the schema.
fn arguments_from_schema(schema: &JsonObject) -> Option<Vec<PromptArgument>> {
    let properties = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let arguments: Vec<PromptArgument> = properties
        .iter()
        .map(|(name, property)| {
            let mut argument = PromptArgument::new(name.clone());
            argument.description = property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            argument.required = Some(required.contains(&name.as_str()));
            argument
        })
        .collect();
    (!arguments.is_empty()).then_some(arguments)
}

/// A prompt from a closure with extractors; use [`Params<T>`] for its arguments.
pub fn prompt<H, M>(
    name: impl Into<String>,
    description: impl Into<String>,
    handler: H,
) -> PromptDef
where
    H: Handler<M>,
    H::Output: IntoGetPromptResult,
    M: 'static,
{
    let mut definition = PromptDefinition::new(name);
    definition.description = Some(description.into());
    definition.arguments = H::input_schema().as_ref().and_then(arguments_from_schema);
    PromptDef {
        definition,
        handler: erase(handler, IntoGetPromptResult::into_get_prompt_result),
        required_scopes: Vec::new(),
        scope_error: None,
    }
}

impl<P: Prompt> From<P> for PromptDef {
    fn from(prompt_impl: P) -> Self {
        let prompt_impl = Arc::new(prompt_impl);
        let name = prompt_impl.name();
        let description = prompt_impl.description();
        let handler = move |Params(args): Params<P::Args>, cx: RequestContext| {
            let prompt_impl = prompt_impl.clone();
            async move { prompt_impl.get(args, cx).await }
        };
        let mut def = prompt(name, String::new(), handler);
        def.definition.description = description;
        def
    }
}

impl PromptDef {
    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.definition.icons = Some(icons);
        self
    }

    /// Replaces the argument list.
    #[must_use]
    pub fn arguments(mut self, arguments: Vec<PromptArgument>) -> Self {
        self.definition.arguments = Some(arguments);
        self
    }

    /// Scopes a `prompts/get` of this prompt (or a completion of its arguments) needs on an
    /// endpoint protected by [`bearer_auth`](crate::transport::http::McpHttp::bearer_auth),
    /// beyond the server's [`required_scopes`](crate::ServerBuilder::required_scopes): without
    /// one, HTTP 403 with `error="insufficient_scope"`. `prompts/list` still lists the prompt.
    /// Each scope must be an RFC 6749 scope token: registering fails with
    /// [`BuildError::InvalidScope`] otherwise.
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let name = &self.definition.name;
        crate::server::auth::scopes::set(
            &mut self.required_scopes,
            &mut self.scope_error,
            || format!("prompt `{name}`"),
            scopes,
        );
        self
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> &PromptDefinition {
        &self.definition
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    pub(crate) fn prepare(mut self) -> Result<Self, BuildError> {
        crate::server::tool::validate_name(&self.definition.name)?;
        if let Some(err) = self.scope_error.take() {
            return Err(err);
        }
        Ok(self)
    }

    /// The first required argument missing from `arguments`, if any.
    pub(crate) fn missing_argument(&self, arguments: &Value) -> Option<&str> {
        self.definition
            .arguments
            .as_ref()?
            .iter()
            .find_map(|argument| {
                let present = arguments.get(&argument.name).is_some_and(|v| !v.is_null());
                (argument.required == Some(true) && !present).then_some(argument.name.as_str())
            })
    }
}
