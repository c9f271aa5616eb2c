//! Prompts, written in one of two ways: a closure with extractors ([`PromptDef::new`]) or a
//! type implementing [`PromptHandler`]; either is registered on the builder
//! ([`ServerBuilder::prompt`](crate::ServerBuilder::prompt)) or at run time
//! ([`Server::define_prompt`](crate::Server::define_prompt)). The argument list `prompts/list`
//! shows is derived from the arguments type's JSON schema.
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
    GetPromptResult, Icon, JsonObject, Meta, Prompt, PromptArgument, PromptMessage,
};
use crate::server::context::RequestContext;
use crate::server::handler::{
    Completers, ErasedHandler, Handler, Params, StateNeed, complete_method, erase,
};

/// Converts a prompt handler's output into a `prompts/get` result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt's result",
    label = "the prompt's future yields this",
    note = "a prompt returns `String`, `PromptMessage`, `Vec<PromptMessage>`, `GetPromptResult`, or `Result` of one of these with an error convertible into `McpError`"
)]
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

/// A prompt written as a type: typed arguments (string fields), any output. Its value is
/// registered as it is, like a [`PromptDef`] (`.prompt(Review)`); [`PromptDef::from`] turns it
/// into one, to set what the trait does not say (icons, scopes, ...).
///
/// ```
/// use actix_mcp::{PromptHandler, RequestContext, Server};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct ReviewArgs {
///     /// The code to review.
///     code: String,
/// }
///
/// struct Review;
///
/// impl PromptHandler for Review {
///     type Args = ReviewArgs;
///     type Output = String;
///     fn name(&self) -> String { "review".into() }
///     fn description(&self) -> Option<String> { Some("Asks for a code review".into()) }
///     async fn get(&self, args: ReviewArgs, _cx: RequestContext) -> String {
///         format!("Please review:\n{}", args.code)
///     }
/// }
///
/// let server = Server::builder("reviewer", "1.0.0").prompt(Review).build();
/// assert!(server.is_ok());
/// ```
pub trait PromptHandler: Send + Sync + 'static {
    /// The arguments; their schema's properties become the prompt's argument list.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the prompt returns.
    type Output: IntoGetPromptResult;

    /// The prompt's name (unique on the server).
    fn name(&self) -> String;

    /// A display title (see [`PromptDef::title`]).
    fn title(&self) -> Option<String> {
        None
    }

    /// What the prompt is for (see [`PromptDef::description`]).
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

/// A prompt as the server serves it: its wire definition (the [`protocol::Prompt`](Prompt)
/// that `prompts/list` shows) plus its handler and scopes.
///
/// Made from a closure with [`PromptDef::new`], or from a [`PromptHandler`] impl with
/// [`PromptDef::from`]; the wire metadata is set with the builder methods
/// ([`title`](Self::title), [`description`](Self::description), [`icons`](Self::icons), ...).
/// Registered with [`ServerBuilder::prompt`](crate::ServerBuilder::prompt) or
/// [`Server::define_prompt`](crate::Server::define_prompt), which check it (name, scopes).
#[derive(Clone)]
pub struct PromptDef {
    pub(crate) definition: Prompt,
    pub(crate) handler: ErasedHandler<GetPromptResult>,
    /// Scopes a get needs on a bearer-protected endpoint (beyond the server's base set).
    pub(crate) required_scopes: Vec<String>,
    /// An invalid scope given to `required_scopes`, reported by `prepare`.
    scope_error: Option<BuildError>,
    /// The application state the handler's extractors read, checked at `build`.
    pub(crate) state_needs: Vec<StateNeed>,
    /// Completers by argument name.
    pub(crate) completers: Completers,
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

/// A prompt from a closure with extractors.
///
/// **Deprecated:** [`PromptDef::new`] takes the name and the closure; the description is set
/// like the rest of the wire metadata.
#[deprecated(
    since = "0.2.0",
    note = "use `PromptDef::new(name, handler).description(description)`"
)]
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
    PromptDef::new(name, handler).description(description)
}

impl<P: PromptHandler> From<P> for PromptDef {
    /// The prompt a [`PromptHandler`] impl defines, with the metadata its methods give.
    fn from(prompt_impl: P) -> Self {
        let prompt_impl = Arc::new(prompt_impl);
        let name = prompt_impl.name();
        let title = prompt_impl.title();
        let description = prompt_impl.description();
        let handler = move |Params(args): Params<P::Args>, cx: RequestContext| {
            let prompt_impl = prompt_impl.clone();
            async move { prompt_impl.get(args, cx).await }
        };
        let mut def = PromptDef::new(name, handler);
        def.definition.title = title;
        def.definition.description = description;
        def
    }
}

impl PromptDef {
    /// A prompt named `name` (unique on the server; 1 to 128 characters of
    /// `A-Z a-z 0-9 _ - . /`) built by a closure with extractors; with [`Params<T>`], the
    /// properties of `T`'s JSON schema are its argument list.
    ///
    /// ```
    /// use actix_mcp::{Params, PromptDef};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct GreetArgs { name: String }
    ///
    /// let greet = PromptDef::new("greet", |Params(args): Params<GreetArgs>| async move {
    ///     format!("Greet {} warmly.", args.name)
    /// })
    /// .description("Greets someone");
    /// assert_eq!(greet.definition().arguments.as_ref().map(Vec::len), Some(1));
    /// ```
    pub fn new<H, M>(name: impl Into<String>, handler: H) -> Self
    where
        H: Handler<M>,
        H::Output: IntoGetPromptResult,
        M: 'static,
    {
        let mut definition = Prompt::new(name);
        definition.arguments = H::input_schema().as_ref().and_then(arguments_from_schema);
        Self {
            definition,
            handler: erase(handler, IntoGetPromptResult::into_get_prompt_result),
            required_scopes: Vec::new(),
            scope_error: None,
            state_needs: H::required_state(),
            completers: Completers::new(),
        }
    }

    complete_method! {
        /// Completes the argument `argument` (`completion/complete` naming this prompt).
        /// `completer` is a handler like any other: its extractors are
        /// [`CompleteRequestParams`](crate::protocol::CompleteRequestParams) (the value typed
        /// so far, the other arguments' values), [`State<T>`](crate::State),
        /// [`RequestContext`](crate::RequestContext) or your own; it returns the suggestions
        /// (`Vec<String>`, or a `Result` of them), at most 100 of which are sent. State it
        /// reads is checked by [`build`](crate::ServerBuilder::build). Arguments without a
        /// completer of their own are answered by the server's
        /// [`completion`](crate::ServerBuilder::completion) handler.
        ///
        /// ```
        /// use actix_mcp::protocol::CompleteRequestParams;
        /// use actix_mcp::{Params, PromptDef, State};
        /// use schemars::JsonSchema;
        /// use serde::Deserialize;
        ///
        /// #[derive(Deserialize, JsonSchema)]
        /// struct Args { language: String }
        ///
        /// /// The languages this server reviews (application state).
        /// struct Languages(Vec<&'static str>);
        ///
        /// let review = PromptDef::new("review", |Params(a): Params<Args>| async move {
        ///     format!("Review this {} code.", a.language)
        /// })
        /// .complete(
        ///     "language",
        ///     |request: CompleteRequestParams, State(known): State<Languages>| async move {
        ///         let typed = request.argument.value;
        ///         known.0.iter().filter(|l| l.starts_with(&typed)).map(|l| l.to_string()).collect::<Vec<_>>()
        ///     },
        /// );
        /// # let _ = review;
        /// ```
        argument
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Sets what the prompt is for.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.definition.description = Some(description.into());
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.definition.icons = Some(icons);
        self
    }

    /// Sets the prompt's `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.definition.meta = Some(meta);
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
        crate::server::auth::scope_token::set(
            &mut self.required_scopes,
            &mut self.scope_error,
            || format!("prompt `{name}`"),
            scopes,
        );
        self
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> &Prompt {
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
